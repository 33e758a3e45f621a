"""Every value an output restates gets checked where it stands.

The oracle's mail "Below 75 quantity: Tea selection box ..." is checked for its rows; the 75 beside
them is what the list was drawn with, and an agent that writes "Below 76" has misread it even with
the right rows. ``state_checks`` reads what each mail and document of the oracle says and, for each
value it states (a number, a day, a clock time, a file, or a memory piece's name), adds it to an
``evaluate_stated_values`` check with the words the oracle binds it to
(``office_env.evaluation.stated``): where an agent's output binds a value of the same kind to those
words, it must be that value, and no other may be offered beside it ("37500 or 37501"). A name is
told apart from the task's other names (the memory's other values, earlier and near-miss ones). A
person of the office is known by the name the oracle writes (whole, or the first name alone) and told
apart from the office's other people, also where a greeting or a sign-off binds it ("Hi Elliot,",
"Best,\nZara"): there a reply or a forward quotes the mail's own two people, so the check tells the
name apart from the other colleagues only. The file a mail or document names as the one its work was
drawn from (a file the oracle reads) stands alone: an output that names another file, none of the
task's own outputs, and never it names the wrong file. A value the untouched office already states
otherwise in that place (an older mail between the same people) is left out: the check judges what
the agent writes.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol

from generators.model import TaskDraft
from office_env import default_registry
from office_env.apps import file_readers
from office_env.errors import OfficeError
from office_env.evaluation import evaluate_criteria, stated
from office_env.evaluation.builders import stated_values
from office_env.evaluation.content import find_mailbox_user
from office_env.evaluation.keywords import normalize
from office_env.tools import converted_path
from office_env.workspace import Workspace

# words a threshold is said with: an agent may say "under 75" where the oracle says "below 75" (the
# same direction only: "over" beside a list drawn "below 75" may be any other figure's)
_THRESHOLD_WORDS = ["threshold", "limit", "cap", "cutoff", "cut-off", "mark", "minimum", "maximum"]
_DIRECTIONS = (("below", "under", "beneath", "less"), ("above", "over", "exceeding", "exceeds", "more"))
_NAME_RE = re.compile(r"^[A-Z][\w&'.-]*(?: [\w&'().-]+){0,6}$")
GREETINGS = stated.GREETINGS  # an agent may say "Hello Elliot" where the oracle says "Hi Elliot"


class Person(Protocol):
    """A person of the office (``office_env.synthesis.world.Person``)."""

    @property
    def name(self) -> str: ...

    @property
    def first(self) -> str: ...

    @property
    def user(self) -> str: ...


def _threshold_words(cue: str) -> list[str]:
    """The words a threshold said with ``cue`` may be said with too."""
    same_way = next((group for group in _DIRECTIONS if cue in group), ())
    return [w for w in (*same_way, *_THRESHOLD_WORDS) if w != cue]


def prose_targets(draft: TaskDraft) -> list[tuple[dict[str, Any], str]]:
    """(target args, text) of each mail and document the oracle writes (a document's PDF copy too)."""
    out: list[tuple[dict[str, Any], str]] = []
    tools = default_registry()
    converted = {c.args.get("file_path"): c.args.get("output_path") for c in draft.oracle  # a document's PDF copy
                 if c.tool in tools and tools.get(c.tool).app == "word" and tools.get(c.tool).converts_to == "pdf"}
    for call in draft.oracle:
        args = call.args
        if call.tool == "email_send_email" and args.get("sender") and args.get("recipient"):
            out.append(({"doc_type": "email", "sender": str(args["sender"]), "recipient": str(args["recipient"])},
                        f"{args.get('subject', '')}\n{args.get('content', '')}"))
        elif call.tool == "word_write_to_file" and str(args.get("file_path", "")).endswith(".docx"):
            path = str(args["file_path"])
            out.append(({"doc_type": "docx", "file": path}, str(args.get("content", ""))))
            pdf = converted.get(path)
            if pdf:
                out.append(({"doc_type": "pdf", "file": str(pdf)}, str(args.get("content", ""))))
    return out


def _required(evaluation: list[dict[str, Any]], target: dict[str, Any]) -> list[str]:
    """The keywords the task's checks require of ``target``'s output."""
    words: list[str] = []
    for item in evaluation:
        args, function = item.get("args", {}), item.get("function")
        if target["doc_type"] == "email" and function == "evaluate_email_sent" and \
                args.get("sender") == target["sender"] and args.get("recipient") == target["recipient"]:
            words += [str(k) for k in (*args.get("subject_keywords", ()), *args.get("body_keywords", ()))]
        elif target["doc_type"] != "email" and function == "evaluate_contain" and args.get("file") == target["file"]:
            words += [str(k) for k in args.get("keywords", ())]
    return words


def _masked(text: str, words: list[str]) -> str:
    """``text`` (lower-cased) with what the keywords require blanked out: that much is checked."""
    for word in sorted({normalize(w) for w in words if w.strip()}, key=len, reverse=True):
        if word not in text:  # a pattern of the word alone finds nothing then: spared its pass
            continue
        text = stated.whole_word_re(word).sub(_blank, text)
    return text


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group(0))


def _names(draft: TaskDraft) -> dict[str, tuple[str, list[str]]]:
    """Each name-like memory value (lower-cased) -> (the value, the task's other names)."""
    values = [str(v) for p in draft.memory for v in (p.value, *p.superseded, *(d.value for d in p.distractors))]
    named = [v for v in dict.fromkeys(values) if _NAME_RE.match(v) and not stated.value_key("file", v)
             and stated.value_key("number", v) is None and len(v) <= 80]
    return {v.lower(): (v, sorted(o for o in named if o != v)) for v in named}


def _people(people: Sequence[Person]) -> dict[str, tuple[str, str]]:
    """Each person's name and first name (lower-cased) -> (the name as written, the person's user)."""
    out: dict[str, tuple[str, str]] = {}
    for person in people:
        for name in (person.name, person.first):
            out.setdefault(name.lower(), (name, person.user))
    return out


def _base(path: Any) -> str:
    return str(path).rsplit("/", 1)[-1].lower()


def _outputs(draft: TaskDraft) -> set[str]:
    """The base names (lower-cased) of the files the oracle writes (a converted document's PDF too)."""
    out = set()
    tools = default_registry()
    for call in draft.oracle:
        tool = tools.get(call.tool) if call.tool in tools else None
        if tool is not None and (tool.creates or tool.edits) and call.args.get("file_path"):
            out.add(_base(call.args["file_path"]))
        converted = converted_path(call.tool, call.args)
        if converted is not None or call.args.get("output_path"):
            out.add(_base(converted or call.args["output_path"]))
    return out


def _entries(draft: TaskDraft, text: str, required: list[str], target: dict[str, Any] | None = None,
             people: Sequence[Person] = ()) -> list[dict[str, Any]]:
    thresholds = {str(p.value) for p in draft.memory if p.cue == "threshold"}
    entries: dict[tuple[str, str, str], dict[str, Any]] = {}
    names = _names(draft)
    persons = _people(people)
    parties = {str((target or {}).get(k, "")).split("@")[0].lower() for k in ("sender", "recipient")} - {""}
    # the files the oracle reads with an office app (a text file it looks through with the file system is left out)
    reads = {tool for tool, app in file_readers() if app.office}
    read = {_base(c.args.get("file_path", "")) for c in draft.oracle if c.tool in reads}
    # what an output may name without the file it was drawn from: the task's outputs, the other files it names
    beside = _outputs(draft) | {key for _, _, key in stated.candidates(text.lower(), "file")}
    for kind in stated.KINDS:
        plain = _masked(stated.prepared(text, kind), [w for w in required if stated.value_key(kind, w) is None])
        known = tuple(v for v, _ in names.values()) + tuple(v for v, _ in persons.values())
        for start, end, key in stated.candidates(plain, kind, None, known):
            person = persons.get(key) if kind == "name" else None
            if kind == "name" and (any(normalize(w) == key for w in required) or
                                   (person is None and (key not in names or not names[key][1]))):
                continue
            before, after = stated.cues(plain, start, end)
            address = person is not None and before in (*GREETINGS, stated.SIGN_OFF)
            before = before if before and (address or before.split()[0] not in stated.NOT_CUES) else None
            after = after if after and after.split()[-1] not in stated.NOT_CUES else None
            if kind == "number" and before:
                after = None  # a figure is bound by what leads to it ("below 75"); "12 quantity" is another row's
            if not (before or after) and kind == "name":
                continue  # a name with no cue: only its own words would say it is offered as a hedge
            if person is not None:
                shown = person[0]
            else:
                shown = names[key][0] if kind == "name" else text[start:end] if kind != "number" else plain[start:end]
            # a greeting or a sign-off is checked apart: it is told from the other colleagues only
            role = "address" if address else ""
            entry = entries.setdefault((kind, str(key), role), {"value": shown, "kind": kind})
            for side, word in (("before", before), ("after", after)):
                if word:
                    words = entry.setdefault(side, [])
                    more = _threshold_words(word) if side == "before" and shown in thresholds else \
                        GREETINGS if side == "before" and word in GREETINGS else []
                    for w in [word, *more]:
                        if w not in words:
                            words.append(w)
            if person is not None:
                left_out = {person[1]} | (parties if address else set())
                others = {n for n, user in persons.values() if user not in left_out}
                entry["others"] = sorted(others | (set(names[key][1]) if key in names and not address else set()))
            elif kind == "name":
                entry["others"] = names[key][1]
            if kind == "file" and key in read and key not in _outputs(draft):
                entry["alone"] = sorted(beside - {key})  # the file the work was drawn from: no other in its place
    return list(entries.values())


def _already_said(workspace: Workspace | None, target: dict[str, Any], entries: list[dict[str, Any]]
                  ) -> list[dict[str, Any]]:
    """``entries`` without those the untouched office already states otherwise where the check reads
    (an older mail between the same people), judged by the check itself."""
    if workspace is None or target["doc_type"] != "email" or not entries:
        return entries
    try:
        find_mailbox_user(workspace, target["sender"])
    except OfficeError:
        return entries  # no mailbox yet: nothing is said in it
    report = evaluate_criteria(workspace, [stated_values(**target, values=[entry]) for entry in entries])
    return [entry for entry, result in zip(entries, report.results) if result.passed]


def state_checks(draft: TaskDraft, workspace: Workspace | None = None, people: Sequence[Person] = ()) -> TaskDraft:
    """The draft with an ``evaluate_stated_values`` check for each mail and document of its oracle
    that states a value (see the module docstring); ``people``: the office's."""
    evaluation = copy.deepcopy(draft.evaluation)
    for target, text in prose_targets(draft):
        found = _entries(draft, text, _required(evaluation, target), target, people)
        entries = _already_said(workspace, target, found)
        if entries:
            check = stated_values(**target, values=entries)
            if check not in evaluation:
                evaluation.append(check)
    return replace(draft, evaluation=evaluation) if evaluation != draft.evaluation else draft
