"""Values a task's piece draws from a pool of words, not from the office: a status that marks a
sheet's rows, the label of a row added under the figures, the group an invitation goes to. One
pool serves the task's own pieces and the jobs for later, so which word a history says tells no
reader whose work it is.

Each is a phrase small talk does not use (a history's other turns must not hold a task's value by
chance), and none holds "total" or another's words: a task's other details ("the total Quantity")
must not contain its label, and a correction from one word to another must be a change a reader
can see.
"""

from __future__ import annotations

# what a row becomes when someone has acted on it ("mark those claims Escalated")
STATUS_WORDS = ("Escalated", "Disputed", "Awaiting sign-off", "Queried", "Flagged for review", "Sent for approval")
# what the row under a column's figures is called when its sum is written there
ROW_LABELS = ("All rows", "Bottom line", "Year to date", "Whole sheet", "All lines")
# who else an invitation goes to, said as a group that a document lists ("everyone from the last sync")
INVITEES = ("everyone from the last sync", "the people at the last meeting", "whoever was at the last one",
            "the same crowd as last time")
# a file named for nothing (an anchor no value is said against: "the file legal flagged is rota.xlsx"),
# by its bare name as a file of the office is named where a value is derived from it
FILE_NAMES = ("rota.xlsx", "handover_notes.docx", "supplier_list.xlsx", "room_plan.pdf", "travel_log.xlsx",
              "asset_register.xlsx", "training_matrix.xlsx", "visitor_log.docx", "budget_draft.xlsx",
              "minutes_march.docx", "stocktake.xlsx", "floor_plan.pdf", "contacts.xlsx", "policy_review.docx")
