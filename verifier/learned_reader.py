"""A discriminative reader: what a plain learner trained on one labelled build pulls out of another.

The naive-Bayes reader of :mod:`verifier.adversary` understates what a learner can do, so this one
is the ordinary baseline a researcher would try first: TF-IDF over word 1-3 grams of each user turn
(values masked), the last words of the assistant turn before it and the turn's shape (its length,
its place in the day), fed to a logistic regression trained on the train build's evidence marks.
It ranks every user turn of a test history.

Two readings of that ranking are scored on the test build:

- ``tfidf_logreg``: evidence-turn precision at the best F1 of the ranking (and that recall), the
  precision at the low-recall peak of :func:`verifier.adversary.curve_peak`, and the isolation rate
  (the share of tasks whose top :data:`verifier.adversary.TOP_TURNS` turns hold every final value
  and no wrong one);
- ``typed_guesser``: for each memory piece, the candidate of the piece's own type (file, address,
  day, time, number, name, phrase) said in the turn the classifier ranks highest among turns that
  say such a candidate; a task counts when every piece is right. The guesser is given the office's
  inventory for free: every value the record marks (final, earlier, near-miss) is a candidate of
  its type, beside the typed tokens it finds on its own. A piece said in no single turn (a value
  derived from two turns) cannot be guessed.

Targets (issue figures): precision at best F1 <= :data:`F1_PRECISION_TARGET`, isolation <=
:data:`LEARNED_ISOLATION_TARGET`, guesser <= :data:`GUESSER_TARGET` of tasks. scikit-learn is
imported when a reader is trained, never by the build's workers.

A reader must not be tested on what it memorised: a regenerated task retells its seed's words
(its subject, its clauses), which a reader trained on the same seed learns as the words of its
evidence turns, and tasks set in one office share its names. :func:`held_out_folds` deals the
tasks to two halves by what they share (:func:`share_key`), so that :func:`cross_validated` (a
build's own report) and the quality bench train each reader on one half and score it on the other.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Sequence, TypeVar

from verifier.adversary import (
    TOP_TURNS,
    WORD_RE,
    curve_peak,
    dialogue_of,
    final_values,
    isolates,
    mask_values,
    memory_of,
    query_of,
    user_turns,
)
from verifier.gameability import value_re

F1_PRECISION_TARGET = 0.35
LEARNED_ISOLATION_TARGET = 0.10
GUESSER_TARGET = 0.10

_DAY_RE = re.compile(r"\b(?:(?:next|this|last|on) )?(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                     r"(?: (?:next|this|last) week| week)?\b|\btomorrow\b|\btoday\b|\byesterday\b", re.IGNORECASE)
_NAME_RE = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}")


def _tokens(text: str) -> list[str]:
    return WORD_RE.findall(mask_values(text))


_PLAIN = frozenset("the a an of to and or for in on at with is are be it this that we our my your please now do "
                   "where what how can you".split())


def content_words(text: str) -> list[str]:
    """The words of ``text`` that say what it is about (values masked, short and plain words out)."""
    return [w for w in re.findall(r"[a-z][a-z']+", mask_values(text)) if len(w) > 2 and w not in _PLAIN]


def query_overlap(text: str, query: str) -> list[str]:
    """How many content words and word pairs ``text`` shares with the task's ``query``, as two
    tokens (``qw:`` up to 3, ``qb:`` up to 2): what any agent reads, the query being its task."""
    words, asked = content_words(text), content_words(query)
    shared = len(set(words) & set(asked))
    pairs = len(set(zip(words, words[1:])) & set(zip(asked, asked[1:])))
    return [f"qw:{min(shared, 3)}", f"qb:{min(pairs, 2)}"]


def turn_document(turn: dict[str, Any], place: int, count: int, query: str | None = None) -> str:
    """The words the reader sees of one user turn: the masked text, the assistant's last three
    words before it (``ctx:``) and the turn's shape (``len:`` bucket, ``pos:`` fifth of the day);
    with a ``query``, also the turn's overlap with it (:func:`query_overlap`)."""
    words = _tokens(turn["text"])
    before = [f"ctx:{w}" for w in _tokens(turn["before"])[-3:]]
    shape = [f"len:{min(len(words) // 4, 8)}", f"pos:{(5 * place) // max(count, 1)}"]
    if turn["before"].rstrip().endswith("?"):
        shape.append("after:question")
    if query is not None:
        shape += query_overlap(turn["text"], query)
    return " ".join(words + ["|"] + before + shape)


def _documents(record: dict[str, Any], query_aware: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    turns, docs = [], []
    query = query_of(record) if query_aware else None
    for session in dialogue_of(record):
        day = user_turns({"dialogue": [session]})
        for place, turn in enumerate(day):
            turns.append(turn)
            docs.append(turn_document(turn, place, len(day), query))
    return turns, docs


class LearnedReader:
    """TF-IDF (word 1-3 grams, seen in two turns at least) and a class-balanced logistic
    regression over :func:`turn_document`, trained on ``train``'s evidence marks.
    ``query_aware``: each turn also says how much it shares with its task's query."""

    def __init__(self, train: list[dict[str, Any]], query_aware: bool = False) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression

        self.query_aware = query_aware
        docs: list[str] = []
        labels: list[int] = []
        for record in train:
            turns, texts = _documents(record, query_aware)
            docs += texts
            labels += [int(t["evidence"]) for t in turns]
        if len(set(labels)) < 2:
            raise ValueError("the train build needs evidence turns and other turns to learn from")
        self.vectorizer = TfidfVectorizer(tokenizer=str.split, token_pattern=None, lowercase=False,
                                          ngram_range=(1, 3), min_df=2, sublinear_tf=True)
        features = self.vectorizer.fit_transform(docs)
        self.model = LogisticRegression(C=4.0, class_weight="balanced", max_iter=2000, solver="liblinear",
                                        random_state=0)
        self.model.fit(features, labels)

    def rank(self, record: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
        """Every user turn of ``record`` with its score, best first (earlier turn first on a tie)."""
        turns, docs = _documents(record, self.query_aware)
        if not turns:
            return []
        scores = self.model.decision_function(self.vectorizer.transform(docs))
        order = sorted(range(len(turns)), key=lambda i: (-float(scores[i]), i))
        return [(float(scores[i]), turns[i]) for i in order]

    def strongest(self, count: int = 15) -> list[tuple[str, float]]:
        """The n-grams that most say "evidence" (what a history should stop giving away)."""
        names = self.vectorizer.get_feature_names_out()
        weights = self.model.coef_[0]
        top = sorted(range(len(names)), key=lambda i: -weights[i])[:count]
        return [(str(names[i]), round(float(weights[i]), 2)) for i in top]


# -- the typed guesser ---------------------------------------------------------------------------

def value_kind(value: str) -> str:
    """The type a reader can tell a value by: a ``value_re`` kind, a day, a name or a phrase."""
    text = value.strip()
    match = value_re().fullmatch(text)
    if match:
        return str(match.lastgroup)
    if _DAY_RE.fullmatch(text):
        return "day"
    if re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}", text):
        return "name"
    return "phrase"


def _said(piece: dict[str, Any]) -> str:
    return str(piece.get("said_as") or piece.get("value") or "")


def _marked_values(record: dict[str, Any]) -> list[str]:
    out = []
    for piece in memory_of(record):
        out += [_said(piece), str(piece.get("value") or ""), *map(str, piece.get("superseded") or [])]
        out += [str(d.get("value", "")) for d in piece.get("distractors") or []]
    return sorted({v for v in out if v.strip()}, key=len, reverse=True)


def candidates(text: str, kind: str, marked: list[str]) -> list[str]:
    """The candidates of ``kind`` a turn says: the marked values of that kind first (longest
    first), then the typed tokens found in the text, in order."""
    low = text.lower()
    out = [v for v in marked if value_kind(v) == kind and v.lower() in low]
    if kind in ("email", "file", "date", "time", "number"):
        out += [m.group(0) for m in value_re().finditer(text) if m.lastgroup == kind]
    elif kind == "day":
        out += [m.group(0) for m in _DAY_RE.finditer(text)]
    elif kind == "name":
        out += [m.group(0) for m in _NAME_RE.finditer(text)]
    return out


def _same(a: str, b: str) -> bool:
    norm = lambda s: " ".join(s.lower().replace(",", "").split()).strip(" .")  # noqa: E731
    return norm(a) == norm(b)


def guess(record: dict[str, Any], ranked: list[tuple[float, dict[str, Any]]],
          inventory: Sequence[str] = ()) -> tuple[int, int]:
    """How many memory pieces of ``record`` the guesser gets right, of how many. ``inventory``: other
    values the reader knows of the office (the build's), candidates as the record's own are."""
    marked = _marked_values(record)
    if inventory:
        marked = sorted(set(marked) | set(inventory), key=lambda v: (-len(v), v))
    right = total = 0
    for piece in memory_of(record):
        # a derived value is said in no turn: its relation ("two days after the audit") is no answer
        final = str(piece.get("value") or "") if piece.get("derived") else _said(piece)
        if not final.strip():
            continue
        total += 1
        kind = value_kind(final)
        for _, turn in ranked:
            found = candidates(turn["text"], kind, marked)
            if found:
                right += _same(found[0], final) or _same(found[0], str(piece.get("value") or ""))
                break
    return right, total


# -- scoring ---------------------------------------------------------------------------------------

def best_f1(scored: list[tuple[float, bool]], total: int) -> tuple[float, float, float]:
    """(precision, recall, F1) at the ranking's best F1."""
    best = (0.0, 0.0, 0.0)
    hits = 0
    ranked = sorted(scored, key=lambda s: -s[0])
    for k, (score, positive) in enumerate(ranked, 1):
        hits += positive
        if k < len(ranked) and ranked[k][0] == score:
            continue  # no threshold cuts inside a tie: only after its last turn
        if not total or not hits:
            continue
        precision, recall = hits / k, hits / total
        f1 = 2 * precision * recall / (precision + recall)
        if f1 > best[2]:
            best = (precision, recall, f1)
    return best


def evaluate_learned(train: list[dict[str, Any]], test: list[dict[str, Any]], query_aware: bool = False
                     ) -> dict[str, Any]:
    """The reader trained on ``train`` and scored on ``test``: ``tfidf_logreg`` {precision (at best
    F1), recall, f1, peak_precision, isolation}, ``typed_guesser`` {all_right, pieces_right}, the
    strongest n-grams and ``passed`` (``query_aware``: the reader that also reads each turn's
    overlap with its task's query)."""
    reader = LearnedReader(train, query_aware)
    # the office's inventory for free: every value the build's records mark, whichever task's
    inventory = sorted({v for record in test for v in _marked_values(record)})
    scored: list[tuple[float, bool]] = []
    evidence = isolated = all_right = pieces = pieces_right = tasks = 0
    for record in test:
        ranked = reader.rank(record)
        if not ranked:
            continue
        tasks += 1
        evidence += sum(t["evidence"] for _, t in ranked)
        scored += [(s, t["evidence"]) for s, t in ranked]
        isolated += isolates(record, [t for _, t in ranked[:TOP_TURNS]])
        right, total = guess(record, ranked, inventory)
        pieces += total
        pieces_right += right
        all_right += bool(total) and right == total and bool(final_values(record))
    precision, recall, f1 = best_f1(scored, evidence)
    peak, _ = curve_peak(list(scored), evidence)
    logreg = {"precision": precision, "recall": recall, "f1": f1, "peak_precision": peak,
              "isolation": isolated / tasks if tasks else 0.0, "tasks": tasks}
    guesser = {"all_right": all_right / tasks if tasks else 0.0,
               "pieces_right": pieces_right / pieces if pieces else 0.0, "tasks": tasks}
    found = {"tfidf_logreg": logreg, "typed_guesser": guesser, "strongest": reader.strongest()}
    return {**found, "passed": meets_targets(found)}


def meets_targets(found: dict[str, Any]) -> bool:
    """Whether a reader's figures (:func:`evaluate_learned`'s, or several folds' pooled) are within
    the three targets."""
    return (found["tfidf_logreg"]["precision"] <= F1_PRECISION_TARGET
            and found["tfidf_logreg"]["isolation"] <= LEARNED_ISOLATION_TARGET
            and found["typed_guesser"]["all_right"] <= GUESSER_TARGET)


# -- held-out folds ------------------------------------------------------------------------------

T = TypeVar("T")
REPORT_TASKS = 300  # the most tasks a build's report trains and scores on (spread over a larger build)
REPORT_MIN_TASKS = 20  # fewer tasks teach a reader too little for its figures to say anything
REPORT_SMALLER_HALF = 1 / 3  # the least share of the tasks a half by office (or seed task) may hold


def share_key(record: dict[str, Any]) -> str:
    """What ``record`` shares with other tasks that a reader tested on it must not have trained on:
    its seed task (a regenerated task, "seed:1-10" of the seed "1-10/0": subtasks of one seed
    share its words), else its office (a built task's world), else only itself."""
    # raw reads, with reason: the readers take records in their JSON form
    provenance = record.get("provenance")
    provenance = provenance if isinstance(provenance, dict) else {}
    if provenance.get("seed_task"):
        return "seed:" + str(provenance["seed_task"]).split("/", 1)[0]
    if provenance.get("world_seed") is not None:
        return f"world:{provenance['world_seed']}"
    return task_key(record)


def halves(keys: Sequence[str]) -> dict[str, int]:
    """Each key's half (0 or 1): the keys in a fixed hashed order, dealt in turn, so the halves
    differ by one key at most and do not depend on the order the keys come in or on repeats (a key
    added or removed may move others)."""
    ordered = sorted(set(keys), key=lambda key: (hashlib.sha256(key.encode()).hexdigest(), key))
    return {key: index % 2 for index, key in enumerate(ordered)}


_APART = {"seed": "seed task", "world": "office", "task": "task"}  # what the halves of each key keep apart


def task_key(record: dict[str, Any]) -> str:
    """Each task by itself (the halves of a build set in one office)."""
    return f"task:{record.get('id', '')}"


def held_out_folds(train: list[dict[str, Any]], test: list[dict[str, Any]],
                   key: Callable[[dict[str, Any]], str] = share_key
                   ) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Two (train, test) folds in which no test task shares its ``key`` (:func:`share_key`) with a
    task its reader trained on (``train`` and ``test`` may be one build or two); [] when fewer than
    two keys."""
    half = halves([key(r) for r in [*train, *test]])
    if len(half) < 2:
        return []
    return [([r for r in train if half[key(r)] == k], [r for r in test if half[key(r)] != k]) for k in (0, 1)]


def pooled(results: list[dict[str, Any]], weights: list[int]) -> dict[str, Any]:
    """Several folds' figures as one: each number their mean weighted by ``weights`` (the folds'
    test tasks), a count of ``tasks`` their sum, each yes/no all of theirs, anything else the first
    fold's."""
    out: dict[str, Any] = {}
    for key, value in results[0].items():
        if isinstance(value, dict):
            out[key] = pooled([r[key] for r in results], weights)
        elif isinstance(value, bool):
            out[key] = all(r[key] for r in results)
        elif key == "tasks":
            out[key] = sum(r[key] for r in results)
        elif isinstance(value, (int, float)):
            out[key] = sum(w * r[key] for r, w in zip(results, weights)) / max(1, sum(weights))
        else:
            out[key] = value
    return out


def evaluate_query_aware(train: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """:func:`evaluate_learned` of the reader that also reads each turn's overlap with the query."""
    return evaluate_learned(train, test, query_aware=True)


def on_folds(folds: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]],
             score: Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]) -> dict[str, Any]:
    """``score`` (train, test) of each fold, pooled by the folds' test tasks."""
    return pooled([score(train, test) for train, test in folds], [len(test) for _, test in folds])


def spread(items: Sequence[T], most: int = REPORT_TASKS) -> list[T]:
    """At most ``most`` of ``items``, evenly spread over them in their order."""
    if len(items) <= most:
        return list(items)
    return [items[(i * len(items)) // most] for i in range(most)]


def cross_validated(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """:func:`evaluate_learned` over two held-out folds of one build's own tasks (at most
    :data:`REPORT_TASKS`, spread over it), pooled, with ``tasks`` (scored), ``apart`` (what the
    halves keep apart: "seed task", "office", or "task" where every task shares one office) and
    ``passed``; None for fewer than :data:`REPORT_MIN_TASKS` tasks, or when they cannot make two
    folds that each have evidence turns to learn from. Halves further apart in size than
    :data:`REPORT_SMALLER_HALF` (two offices of 18 and 2 tasks) are dealt by task instead: the
    pooled figures are weighted by test tasks, so the reader trained on the few would speak for
    nearly all."""
    sample = spread(records)
    if len(sample) < REPORT_MIN_TASKS:
        return None
    folds, apart = held_out_folds(sample, sample), ""
    if folds and min(len(test) for _, test in folds) < REPORT_SMALLER_HALF * len(sample):
        folds = []
    if folds:
        apart = _APART[share_key(sample[0]).split(":", 1)[0]]
    else:
        folds, apart = held_out_folds(sample, sample, task_key), "task"
    if not folds or any(not test or not any(t["evidence"] for r in train for t in user_turns(r))
                        for train, test in folds):
        return None
    try:
        result = on_folds(folds, evaluate_learned)
    except ValueError:  # a half with no turn other than evidence: nothing to learn from
        return None
    result["tasks"], result["apart"] = sum(len(test) for _, test in folds), apart
    result["passed"] = meets_targets(result)  # of the pooled figures, not each fold's
    return result
