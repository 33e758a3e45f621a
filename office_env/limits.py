"""Resource limits for input that comes from strangers, as data in one place.

Datasets, seed folders, testbeds and agents' tool calls are untrusted: a file may be a zip bomb,
a sheet may claim a million rows, a task.json may nest a hundred thousand levels. Every reader
checks these bounds before it parses, and every write tool refuses input beyond them, so one bad
file costs an error message, not the machine. The README's "Limits" section lists them.
"""

from __future__ import annotations

MiB = 1024 * 1024

# -- files in a testbed, a reference folder or a seed ----------------------------------------
MAX_FILE_BYTES = 32 * MiB            # any single file read from a testbed, on disk
MAX_TREE_FILES = 5_000               # files in one testbed / reference / seed task folder
MAX_TREE_BYTES = 128 * MiB           # all files of one testbed / reference together (sizes as listed: sparse too)
MAX_DATASET_BYTES = 4 * 1024 * MiB   # all testbeds and references of one dataset or seed folder together
MAX_TREE_DEPTH = 16                  # folder nesting below a tree's root
MAX_NAME_CHARS = 200                 # one path component (file or folder name)
MAX_NAME_BYTES = 255                 # the same in UTF-8: the file system's own limit (NAME_MAX)
MAX_PATH_BYTES = 1024                # a whole path argument in UTF-8, well inside PATH_MAX with the root

# -- Office Open XML packages (docx, xlsx): checked on the zip directory before parsing -------
MAX_PACKAGE_MEMBERS = 1_000
MAX_PACKAGE_UNCOMPRESSED = 64 * MiB  # sum of the members' declared sizes
MAX_PACKAGE_RATIO = 200              # uncompressed / compressed, per member over 1 MiB

# -- spreadsheets ----------------------------------------------------------------------------
MAX_SHEET_ROWS = 10_000              # write tools refuse cells beyond these bounds
MAX_SHEET_COLS = 1_000
MAX_RENDER_CELLS = 200_000           # readers render at most this many cells of a sheet
MAX_BOOK_CELLS = 100_000             # cells a read workbook may make (cells, merged and linked ranges): ~3 s, ~150 MB

# -- PDF, mail, calendar ---------------------------------------------------------------------
MAX_PDF_PAGES = 500
MAX_PDF_STREAM_BYTES = 8 * MiB       # one decompressed PDF stream (a content stream, an image)
MAX_PDF_CONTENT_BYTES = 4 * MiB      # page content of all pages, decompressed (text extraction: ~0.5 MB/s)
MAX_MAIL_BYTES = 2 * MiB             # one .eml file
MAX_ICS_BYTES = 8 * MiB              # one .ics file
MAX_TEXT_CHARS = 8 * MiB             # text one reader extracts from a document (pdf, rendered sheet)
MAX_HEADER_CHARS = 998               # one mail subject or event title (RFC 5322's line length)

# -- what an agent gets back from one tool call ----------------------------------------------
MAX_OBSERVATION_CHARS = 20_000       # longer observations are cut, with a marker saying so

# -- JSON from strangers (task.json, subtask files, criteria files, endpoint replies) --------
MAX_JSON_BYTES = 16 * MiB
MAX_JSON_DEPTH = 64
MAX_JSON_VALUES = 2_000_000           # values (lists, objects, items) one JSON text may hold, counted before parsing
MAX_SEED_INSTRUCTION_CHARS = 20_000  # one seed subtask's instruction ("task"); OfficeBench's are a few hundred
MAX_TOLD_INSTRUCTION_CHARS = 2_000   # another seed's instruction a Plus history tells as work for later
MAX_SEED_FIELD_CHARS = 200           # a seed subtask's username, date, weekday, time
MAX_SEED_CRITERIA = 200              # criteria in one seed subtask's evaluation list
MAX_DIALOGUE_TURNS = 50_000          # turns of one task's history (the challenge preset has about 7,500)
MAX_RECORD_ITEMS = 2_000             # items of any other list or keys of any object in a task.json (a build's: tens)
MAX_RECORD_VALUES = 400_000          # values in one task.json (50,000 turns take 200,000;
                                     # a Challenge task about 40,000)
MAX_RECORD_TEXT_CHARS = 50_000       # one string of a task.json (an utterance, a description; a build's: a few hundred)
MAX_SCHEMA_ERRORS = 5                # schema problems named per file (validation stops there)
MAX_COMPARATOR_CHARS = 1_000         # one spreadsheet comparator ('>= 90', 'in [1, 2]') in a criterion
MAX_DIFF_LINES = 5_000               # lines of two documents compared line by line; longer: a multiset difference

# -- per-task budgets (eval, score, builds); overridable on the command line ------------------
TASK_SECONDS = 600.0
TASK_MEMORY_BYTES = 2048 * MiB

# -- the fake OpenAI-compatible endpoint (homer fake-llm) and the requests it accepts ----------
MAX_REQUEST_BYTES = 8 * MiB          # one request body; a larger Content-Length is answered 413
MAX_EMBEDDING_INPUTS = 2_048         # inputs in one embeddings request
MAX_EMBEDDING_DIMENSIONS = 8_192     # 'dimensions' of one embeddings request
MAX_EMBEDDING_VALUES = 1_048_576     # inputs x dimensions in one embeddings request
