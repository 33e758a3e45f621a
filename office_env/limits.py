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
MAX_TREE_DEPTH = 16                  # folder nesting below a tree's root
MAX_NAME_CHARS = 200                 # one path component (file or folder name)

# -- Office Open XML packages (docx, xlsx): checked on the zip directory before parsing -------
MAX_PACKAGE_MEMBERS = 1_000
MAX_PACKAGE_UNCOMPRESSED = 64 * MiB  # sum of the members' declared sizes
MAX_PACKAGE_RATIO = 200              # uncompressed / compressed, per member over 1 MiB

# -- spreadsheets ----------------------------------------------------------------------------
MAX_SHEET_ROWS = 10_000              # write tools refuse cells beyond these bounds
MAX_SHEET_COLS = 1_000
MAX_RENDER_CELLS = 200_000           # readers render at most this many cells of a sheet

# -- PDF, mail, calendar ---------------------------------------------------------------------
MAX_PDF_PAGES = 500
MAX_MAIL_BYTES = 2 * MiB             # one .eml file
MAX_ICS_BYTES = 8 * MiB              # one .ics file

# -- what an agent gets back from one tool call ----------------------------------------------
MAX_OBSERVATION_CHARS = 20_000       # longer observations are cut, with a marker saying so

# -- JSON from strangers (task.json, subtask files, criteria files, endpoint replies) --------
MAX_JSON_BYTES = 16 * MiB
MAX_JSON_DEPTH = 64

# -- per-task budgets (eval, score, builds); overridable on the command line ------------------
TASK_SECONDS = 600.0
TASK_MEMORY_BYTES = 2048 * MiB
