"""Every dialogue bank read at once, for commands that write histories (each bank is otherwise
read on first use)."""

from __future__ import annotations

from generators.other_work import load as load_work_bank
from generators.small_talk import load as load_small_talk_bank
from generators.thread_bank import threads


def check_banks() -> None:
    """Read the thread, small-talk and other-work banks now (each once, then kept): a broken bank
    stops the command at start with one line naming the file and line, before any output."""
    threads()
    load_small_talk_bank()
    load_work_bank()
