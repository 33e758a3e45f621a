"""One task of a dataset, readable in a terminal (``homer show DATASET TASK_ID``).

A task.json holds hundreds of turns; a reader wants the task itself, where in the chat each
memory piece is said (with the turns around it), the criteria in words, the oracle plan and the
office. ``--day N`` prints one day of the chat with its marks; ``--json`` gives the same view as
JSON for scripts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from backends.task_record import Session, TaskRecord, plan_calls
from office_env.evaluation.checks import CHECKS

MARKS = ("evidence", "superseded", "distractor")
_CONTROL = {c: None for c in (*range(0, 9), *range(10, 32), *range(127, 160))}  # a stranger's escapes stay out
CONTEXT_TURNS = 1  # turns shown before and after a marked one
MAX_LISTED_FILES = 200


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value) or "(none)"
    if isinstance(value, str):
        return repr(value)
    return str(value)


def criterion_in_words(criterion: dict[str, Any]) -> str:
    """``function``: what it checks (the catalog's description), then its arguments as words."""
    name = str(criterion.get("function"))
    args = cast("dict[str, Any]", criterion.get("args")) if isinstance(criterion.get("args"), dict) else {}
    spec = CHECKS.get(name)
    what = spec.description.rstrip(".") if spec is not None else "a check this project does not know"
    details = "; ".join(f"{key.replace('_', ' ')} {_value(value)}" for key, value in args.items())
    return f"{name}: {what} -- {details}" if details else f"{name}: {what}"


def _turns(sessions: list[Session]) -> list[dict[str, Any]]:
    return [{"day": session.day, "turn": n + 1, "role": turn.role, "text": turn.text,
             **{m: list(getattr(turn, m) or []) for m in MARKS}}
            for session in sessions for n, turn in enumerate(session.turns)]


def memory_in_context(record: TaskRecord) -> list[dict[str, Any]]:
    """Per memory piece: its value and text, and each turn marked with it (evidence, superseded,
    distractor) with the turns around it on the same day."""
    turns = _turns(record.dialogue)
    pieces = []
    for piece in record.memory:
        marked = []
        for i, turn in enumerate(turns):
            kinds = [m for m in MARKS if piece.id in turn[m]]
            if not kinds:
                continue
            around = [t for t in turns[max(0, i - CONTEXT_TURNS): i + CONTEXT_TURNS + 1] if t["day"] == turn["day"]]
            marked.append({"day": turn["day"], "turn": turn["turn"], "marks": kinds,
                           "context": [{"turn": t["turn"], "role": t["role"], "text": t["text"],
                                        "here": t is turn} for t in around]})
        pieces.append({"id": piece.id, "kind": piece.kind, "value": piece.value, "text": piece.text,
                       "superseded": piece.superseded or [],
                       "distractors": [d.value for d in piece.distractors or []],
                       "turns": marked})
    return pieces


def testbed_listing(testbed: Path) -> list[str]:
    """Files of the testbed, relative, sorted; links and special files are not followed."""
    if not testbed.is_dir() or testbed.is_symlink():
        return []
    files = []
    for path in sorted(testbed.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        files.append(path.relative_to(testbed).as_posix())
        if len(files) >= MAX_LISTED_FILES:
            break
    return files


def _clean(text: str) -> str:
    """Text for a terminal: control characters (escape sequences among them) removed."""
    return text.translate(_CONTROL)


def task_view(record: TaskRecord, testbed: Path) -> dict[str, Any]:
    return {
        "id": record.id, "split": record.split, "family": record.family,
        "apps": list(record.apps),
        "difficulty": record.difficulty,
        "user": record.user.to_dict(), "now": record.now.to_dict(),
        "intent": record.intent, "query": record.query, "description": record.description,
        "subtasks": list(record.subtasks),
        "days": len(record.dialogue), "turns": sum(len(session.turns) for session in record.dialogue),
        "memory": memory_in_context(record),
        "criteria": [criterion_in_words(c) for c in record.criteria()],
        "oracle": plan_calls(record.oracle),
        "testbed": testbed_listing(testbed),
    }


def day_view(record: TaskRecord, day: int) -> dict[str, Any] | None:
    for session in record.dialogue:
        if session.day == day:
            return {"day": day, "date": session.date, "turns": _turns([session])}
    return None


def render_task(view: dict[str, Any]) -> str:
    user = view.get("user") or {}
    now = view.get("now") or {}
    # a Plus task has no family nor difficulty: leave out what is not there rather than print "None"
    head = [view.get("split"), view.get("family") or "seed task", f"apps: {', '.join(view.get('apps') or []) or '-'}",
            view.get("difficulty")]
    lines = [f"{view['id']} ({', '.join(str(part) for part in head if part)})",
             f"user: {user.get('name')} ({user.get('username')}); now: {now.get('date')} {now.get('time')}; "
             f"history: {view['days']} day(s), {view['turns']} turn(s)", "",
             f"intent: {view.get('intent')}"]
    if view.get("query"):
        lines.append(f"query: {view['query']}")
    lines += ["", "description:", f"  {view.get('description')}"]
    if view["subtasks"]:
        lines += ["", "subtasks:"] + [f"  {i + 1}. {s}" for i, s in enumerate(view["subtasks"])]
    lines += ["", "memory (where the chat says it):"]
    for piece in view["memory"]:
        extra = ""
        if piece["superseded"]:
            extra += f"; earlier: {_value(piece['superseded'])}"
        if piece["distractors"]:
            extra += f"; near misses: {_value(piece['distractors'])}"
        lines.append(f"  {piece['id']} [{piece.get('kind')}] {_value(piece.get('value'))}: {piece.get('text')}{extra}")
        for mark in piece["turns"]:
            lines.append(f"    day {mark['day']} turn {mark['turn']} ({', '.join(mark['marks'])}):")
            for turn in mark["context"]:
                pointer = ">" if turn["here"] else " "
                lines.append(f"     {pointer} {turn['turn']:>3} {turn['role']}: {turn['text']}")
        if not piece["turns"]:
            lines.append("    (no turn carries it)")
    lines += ["", "criteria:"] + [f"  - {c}" for c in view["criteria"]]
    lines += ["", "oracle plan:"]
    lines += [f"  {i + 1}. {step.get('tool')} {_args(step.get('args'))}" for i, step in enumerate(view["oracle"])] \
        or ["  (none: its solvability is left to an agent)"]
    lines += ["", f"testbed ({len(view['testbed'])} file(s)):"] + [f"  {f}" for f in view["testbed"]]
    return "\n".join(_clean(line) for line in lines) + "\n"


def render_day(day: dict[str, Any]) -> str:
    lines = [f"day {day['day']} ({day.get('date')}): {len(day['turns'])} turn(s)"]
    for turn in day["turns"]:
        marks = " ".join(f"[{m}: {', '.join(turn[m])}]" for m in MARKS if turn[m])
        lines.append(f"  {turn['turn']:>3} {turn['role']}: {turn['text']}" + (f"  {marks}" if marks else ""))
    return "\n".join(_clean(line) for line in lines) + "\n"


def _args(args: Any) -> str:
    if not isinstance(args, dict):
        return str(args)
    shown = []
    for key, value in args.items():
        text = value if isinstance(value, str) else repr(value)
        text = text.replace("\n", " / ")
        shown.append(f"{key}={text[:80] + '...' if len(text) > 80 else text}")
    return ", ".join(shown)
