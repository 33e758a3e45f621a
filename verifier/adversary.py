"""Adversaries that learn: how far a reader who has seen one labelled build can lift the memory
out of another build without understanding it.

Anyone can run the generator and get builds with their evidence marks, so the shallow, fixed
detectors of :mod:`verifier.gameability` are not enough: these adversaries are trained on the
records of one build (``train``) and scored on a build made with another seed (``test``).

- ``ngram_classifier``: a naive Bayes classifier over word 1- and 2-grams of user turns, value-like
  tokens masked (and the train build's own memory values), the previous assistant turn's last
  words as context features; it ranks every user turn of a test history;
- ``template_topic``: learns the frames around each thread's naming in the train build ("keep X in
  mind", "for X, work from"), finds a test history's most framed phrase without the query, and
  takes the user turns naming it, latest first, those with a value first;
- ``query_topic``: the longest phrase that the query shares with two or more user turns, then as
  ``template_topic`` (needs no training).

Each reports, on the test build, evidence-turn precision at its best operating point (the
highest precision at a recall of at least :data:`MIN_RECALL`; a topic adversary has one point)
and the isolation rate: the share of tasks where its top :data:`TOP_TURNS` turns hold every final
value and no superseded or near-miss value (a reader who copied them would hold the memory).
Targets: precision <= :data:`PRECISION_TARGET`, isolation <= :data:`ISOLATION_TARGET`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from datetime import date
from typing import Any, Iterable

from generators.spoken_time import last_named
from verifier.gameability import has_value_token, value_re

ADVERSARIES = ("ngram_classifier", "template_topic", "query_topic")
PRECISION_TARGET = 0.35
ISOLATION_TARGET = 0.15
TOP_TURNS = 5
MIN_RECALL = 0.10

WORD_RE = re.compile(r"[a-z]+(?:'[a-z]+)?|<v>|[?!:]")  # the words a learned reader sees of a masked turn


# -- reading records -------------------------------------------------------------------------------
# The adversaries take a build's records as the JSON they are written as (bench/quality.py hands them
# over as read, from two builds) and parts of one (``{"dialogue": [session]}``: one day of a history);
# these three are the only reads of a record's fields, and they read its JSON on purpose.

def dialogue_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's sessions as written (none for a record without a dialogue)."""
    return record.get("dialogue") or []  # raw on purpose: a record as read, or a part of one (see above)


def memory_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's memory pieces as written (none for a part of a record without them)."""
    return record.get("memory") or []  # raw on purpose: a record as read, or a part of one (see above)


def query_of(record: dict[str, Any]) -> str:
    return str(record.get("query") or "")  # raw on purpose: a record as read, or a part of one (see above)


def user_turns(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The user turns of a history in order, each with its text, marks and the assistant turn
    before it (its context)."""
    out: list[dict[str, Any]] = []
    for session in dialogue_of(record):
        previous = ""
        for turn in session.get("turns") or []:
            text = str(turn.get("text") or "")
            if turn.get("role") == "user":
                out.append({"text": text, "low": text.lower(), "before": previous,
                            "evidence": bool(turn.get("evidence")), "thread": str(turn.get("thread") or ""),
                            "wrong": bool(turn.get("superseded") or turn.get("distractor"))})
            else:
                previous = text
    return out


def _said(piece: dict[str, Any]) -> str:
    return str(piece.get("said_as") or piece.get("value") or "").lower()


def final_values(record: dict[str, Any]) -> list[str]:
    return [v for v in (_said(p) for p in memory_of(record)) if v.strip()]


def wrong_values(record: dict[str, Any]) -> list[str]:
    out = []
    for piece in memory_of(record):
        out += [str(v).lower() for v in piece.get("superseded") or []]
        out += [str(d.get("value", "")).lower() for d in piece.get("distractors") or []]
    return [v for v in out if v.strip()]


def isolates(record: dict[str, Any], texts: Iterable[str | dict[str, Any]]) -> bool:
    """Do ``texts`` (strings, or turns of :func:`user_turns`) hold every final value of the task and
    none of its wrong ones? A turn marked as saying an earlier or near-miss value holds one in
    whatever words it says it ("Monday the 6th of next month"). A derived value (said in no single
    turn) is held only with both its parts: its relation and a turn that names its anchor outside
    the relation (the anchor's own value)."""
    items = list(texts)
    if any(isinstance(t, dict) and t.get("wrong") for t in items):
        return False
    lowered = [(t["text"] if isinstance(t, dict) else t).lower() for t in items]
    joined = "\n".join(lowered)
    finals = final_values(record)
    if not finals or not all(v in joined for v in finals) or any(v in joined for v in wrong_values(record)):
        return False
    for piece in memory_of(record):
        derived, relation = piece.get("derived"), _said(piece)
        anchor = str(derived.get("anchor") or "").lower() if isinstance(derived, dict) else ""
        if anchor and not any(anchor in t.replace(relation, " ") for t in lowered):
            return False
    return True


def mask_values(text: str, known: Iterable[str] = ()) -> str:
    low = text.lower()
    for value in known:
        if value and len(value) > 2:
            low = low.replace(value, " <v> ")
    return value_re().sub(" <v> ", low)


def _features(turn: dict[str, Any], known: Iterable[str] = ()) -> set[str]:
    words = WORD_RE.findall(mask_values(turn["text"], known))
    feats = set(words) | {f"{a} {b}" for a, b in zip(words, words[1:])}
    before = WORD_RE.findall(mask_values(turn["before"]))[-3:]
    feats |= {f"ctx:{w}" for w in before}
    return feats


# -- the n-gram classifier -----------------------------------------------------------------------

class NgramClassifier:
    """Bernoulli naive Bayes with add-one smoothing over :func:`_features`."""

    def __init__(self, train: list[dict[str, Any]]) -> None:
        pos: Counter = Counter()
        neg: Counter = Counter()
        n_pos = n_neg = 0
        for record in train:
            known = final_values(record) + wrong_values(record)
            for turn in user_turns(record):
                feats = _features(turn, known)
                if turn["evidence"]:
                    pos.update(feats)
                    n_pos += 1
                else:
                    neg.update(feats)
                    n_neg += 1
        self.weights = {f: math.log((pos[f] + 1) / (n_pos + 2)) - math.log((neg[f] + 1) / (n_neg + 2))
                        for f in set(pos) | set(neg) if pos[f] + neg[f] >= 2}
        self.prior = math.log((n_pos + 1) / (n_neg + 1))

    def score(self, turn: dict[str, Any]) -> float:
        return self.prior + sum(self.weights.get(f, 0.0) for f in _features(turn))


# -- the topic adversaries -----------------------------------------------------------------------

def _abouts(record: dict[str, Any]) -> list[str]:
    return sorted({str(p.get("about") or "").lower() for p in memory_of(record) if p.get("about")},
                  key=len, reverse=True)


def learn_frames(train: list[dict[str, Any]], min_tasks: int = 2) -> list[tuple[str, str]]:
    """The (words before, words after) around a thread's naming in user turns of ``train``, seen in
    at least ``min_tasks`` tasks."""
    seen: Counter = Counter()
    for record in train:
        frames = set()
        abouts = _abouts(record)
        for turn in user_turns(record):
            for about in abouts:
                at = turn["low"].find(about)
                if at < 0:
                    continue
                before = WORD_RE.findall(turn["low"][:at])[-2:]
                after = WORD_RE.findall(turn["low"][at + len(about):])[:2]
                if before or after:
                    frames.add((" ".join(before), " ".join(after)))
                break
        seen.update(frames)
    return [frame for frame, count in seen.most_common() if count >= min_tasks]


def _frame_pattern(frames: list[tuple[str, str]]) -> list[re.Pattern[str]]:
    out = []
    for before, after in frames:
        left = r"\b" + r"\W+".join(map(re.escape, before.split())) + r"\W+" if before else r"(?:^|[.!?]\s+)"
        right = r"\W+" + r"\W+".join(map(re.escape, after.split())) + r"\b" if after else r"\s*[.!?,:]"
        out.append(re.compile(left + r"((?:the |a |an |that |this )?[a-z0-9'’ -]{3,60}?)" + right))
    return out


def _rank_topic_turns(turns: list[dict[str, Any]], topic: str) -> list[dict[str, Any]]:
    """User turns naming ``topic``: those with a value first, latest first."""
    naming = [(i, t) for i, t in enumerate(turns) if topic and topic in t["low"]]
    naming.sort(key=lambda it: (not has_value_token(it[1]["text"]), -it[0]))
    return [t for _, t in naming]


def template_topic(record: dict[str, Any], patterns: list[re.Pattern[str]]) -> str:
    found: Counter = Counter()
    for turn in user_turns(record):
        for pattern in patterns:
            for match in pattern.finditer(turn["low"]):
                phrase = match.group(1).strip(" -'")
                if len(phrase.split()) >= 2:
                    found[phrase] += 1
    # the phrase framed most often, and named in most turns
    turns = user_turns(record)
    best = max(found, key=lambda p: (found[p], sum(p in t["low"] for t in turns)), default="")
    return best


def query_topic(record: dict[str, Any]) -> str:
    words = query_of(record).lower().split()
    turns = user_turns(record)
    for n in range(min(8, len(words)), 1, -1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i:i + n]).strip(" ?.!,")
            if len(phrase) > 6 and sum(phrase in t["low"] for t in turns) >= 2:
                return phrase
    return ""


# -- scoring ---------------------------------------------------------------------------------------

def curve_peak(scored: list[tuple[float, bool]], total: int) -> tuple[float, float]:
    """The highest precision at a recall of at least :data:`MIN_RECALL`, and that recall."""
    scored.sort(key=lambda s: -s[0])
    best = (0.0, 0.0)
    hits = 0
    for k, (_, positive) in enumerate(scored, 1):
        hits += positive
        recall = hits / total if total else 0.0
        if recall >= MIN_RECALL and hits / k > best[0]:
            best = (hits / k, recall)
    return best


def evaluate(train: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """Each adversary of :data:`ADVERSARIES`, trained on ``train`` and scored on ``test``:
    ``{precision, recall, isolation, tasks}``, and ``passed``."""
    result: dict[str, Any] = {}
    classifier = NgramClassifier(train)
    patterns = _frame_pattern(learn_frames(train))
    scored: list[tuple[float, bool]] = []
    total = 0
    isolated: Counter[str] = Counter()
    picked: dict[str, list[int]] = {"template_topic": [0, 0], "query_topic": [0, 0]}  # [hits, evidence hits]
    for record in test:
        turns = user_turns(record)
        total += sum(t["evidence"] for t in turns)
        ranked = sorted(((classifier.score(t), i, t) for i, t in enumerate(turns)), key=lambda s: (-s[0], s[1]))
        scored += [(s, t["evidence"]) for s, _, t in ranked]
        isolated["ngram_classifier"] += isolates(record, [t for _, _, t in ranked[:TOP_TURNS]])
        for name, topic in (("template_topic", template_topic(record, patterns)), ("query_topic", query_topic(record))):
            chosen = [t for t in turns if topic and topic in t["low"]]
            picked[name][0] += len(chosen)
            picked[name][1] += sum(t["evidence"] for t in chosen)
            isolated[name] += isolates(record, _rank_topic_turns(turns, topic)[:TOP_TURNS])
    tasks = len(test)
    precision, recall = curve_peak(scored, total)
    result["ngram_classifier"] = {"precision": precision, "recall": recall}
    for name, (hits, good) in picked.items():
        result[name] = {"precision": good / hits if hits else 0.0, "recall": good / total if total else 0.0}
    for name in ADVERSARIES:
        result[name]["isolation"] = isolated[name] / tasks if tasks else 0.0
        result[name]["tasks"] = tasks
    result["passed"] = all(result[n]["precision"] <= PRECISION_TARGET and result[n]["isolation"] <= ISOLATION_TARGET
                           for n in ADVERSARIES)
    return result


def thread_evidence_share(records: list[dict[str, Any]]) -> float:
    """Among user turns about the task's own work (a ``t…`` thread mark), the share that are
    evidence turns (target at most 0.35: the work is talked about without values too)."""
    naming = evidence = 0
    for record in records:
        for turn in user_turns(record):
            if turn["thread"].startswith("t"):
                naming += 1
                evidence += turn["evidence"]
    return evidence / naming if naming else 0.0


def _day(session: dict[str, Any]) -> date | None:
    try:
        return date.fromisoformat(str(session.get("date") or ""))
    except ValueError:
        return None


def last_value_misleads(records: list[dict[str, Any]]) -> tuple[float, int]:
    """Among memory pieces with a corrected value, the share whose value said last in the
    history (the final or an earlier one; the later place in a turn wins) is not the final one:
    how often "take the last value said" is wrong (target at least 20 %); and how many pieces
    that is. (Near-miss values are left out: they come anywhere, and often last.)"""
    wrong = total = 0
    for record in records:
        texts = [(str(t.get("text") or "").lower(), _day(s)) for s in dialogue_of(record)
                 for t in s.get("turns") or []]
        for piece in memory_of(record):
            final = _said(piece)
            others = [v for v in (str(v).lower() for v in piece.get("superseded") or [])
                      if v.strip() and v not in final]
            if not others or not final:
                continue
            last: tuple[int, int, bool] | None = None
            for index, (text, said_on) in enumerate(texts):
                for value, is_final in [(final, True), *[(v, False) for v in others]]:
                    at = last_named(text, value, said_on)  # an earlier day may be said in words
                    if at >= 0 and (last is None or (index, at) > last[:2]):
                        last = (index, at, is_final)
            if last is not None:
                total += 1
                wrong += not last[2]
    return (wrong / total if total else 0.0), total
