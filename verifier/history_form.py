"""How a history reads to someone who must understand it, not pattern-match it: figures that
``bench/quality.py`` reports against the targets of the history-quality work.

- :func:`iso_stamps`: utterances that say a date as a stamp ("2025-06-16") outside a file name;
  people say "Monday the 16th";
- :func:`written_headers`: user turns that say a sheet's column headers as the sheet writes them
  ("the Category with the highest Q1"); people say "the category with the highest Q1";
- :func:`two_turn_share`: memory pieces whose value is never said in a turn that stands alone:
  one that names its work (a word of the piece's ``about``) and is not a short answer to the
  assistant's question just before it, so the reader must join two turns (or resolve "that one");
- :func:`namings_per_work`: how many ways each task's work is called in its user turns (the full
  name, shorter ones, "that one");
- :func:`turned_down_after_final`: pieces with a corrected or a near-miss value where such a
  value is said in the piece's thread after the final value's last mention ("the last value of
  the thread" is then wrong);
- :func:`same_question_answers`: the assistant's small-talk questions asked again in a history
  and answered another way (a person answers "how old is Rex?" once);
- :func:`small_talk_fit`: small-talk reactions that echo the line they react to (repeat a name or
  a content word of it: "Slept like a log, Elm Street was silent." / "Silent Elm Street, nice."),
  and follow-up answers that do not give a kind of answer their question expects (read back
  through the small-talk banks' tags, ``generators.small_talk.kinds``);
- :func:`history_tokens`: tokens of each history by the dataset's counter.

Each takes the records typed or as read (``bench/quality.py`` reads a dataset's JSON) and reads
them typed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from itertools import pairwise
from typing import Any

from backends.task_record import Memory, TaskRecord, Turn, typed_records
from backends.tokens import count_tokens, counter_name
from generators.english import near_key
from generators.small_talk.kinds import fits
from generators.specifics import COMMON_WORDS
from generators.spoken_time import HEADER_CUES, TITLE_WORD_RE, last_named
from generators.work_names import namings
from office_env.apps import registry_cache
from verifier.gameability import EMAIL_PATTERN, file_pattern

_ISO_RE = re.compile(r"(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])")
_WORD_RE = re.compile(r"[a-z0-9]+")
SHORT_ANSWER = 5  # words besides the value: an answer this short leans on the question it answers
# words of a work's name that do not name it ("the claims for second approval": claims, second, approval)
_FUNCTION_WORDS = frozenset(
    ["a", "an", "the", "of", "for", "to", "in", "on", "at", "by", "and", "or", "with", "from", "about", "my", "our",
     "your", "their", "his", "her", "its", "this", "that", "these", "those", "who", "what", "which", "one", "ones",
     "s"])


Records = list[TaskRecord] | list[dict[str, Any]]


def _turns(record: TaskRecord) -> Iterator[tuple[int, int, Turn]]:
    """``(session index, turn index, turn)`` in order."""
    for si, session in enumerate(record.dialogue):
        for ti, turn in enumerate(session.turns):
            yield si, ti, turn


def _low(turn: Turn) -> str:
    return turn.text.lower()


def _said(piece: Memory) -> str:
    return (piece.said_as or piece.value).lower().strip()


@registry_cache(maxsize=1)
def _name_re() -> re.Pattern[str]:
    """An e-mail address or a file's name (the registered apps' kinds among them), whose dates are
    no stamps a person says."""
    return re.compile(rf"{EMAIL_PATTERN}|{file_pattern()}|[\w-]*\d{{4}}-\d{{2}}-\d{{2}}[\w-]*\.\w+", re.IGNORECASE)


def iso_stamps(records: Records) -> tuple[int, int]:
    """Utterances (either role) holding a ``YYYY-MM-DD`` date outside a file name or an e-mail
    address; and how many utterances there are."""
    found = total = 0
    names = _name_re()
    for record in typed_records(records):
        for _, _, turn in _turns(record):
            total += 1
            found += _ISO_RE.search(names.sub(" ", turn.text)) is not None
    return found, total


def written_headers(records: Records) -> tuple[int, int]:
    """User turns that say a value made of a sheet's headers (a piece of a ``HEADER_CUES`` cue: its
    final, earlier or near-miss value) with its headers' capitals, as the sheet writes them; and how
    many user turns there are."""
    found = total = 0
    for record in typed_records(records):
        values = {v for piece in record.memory if piece.cue in HEADER_CUES
                  for v in (piece.value, *(piece.superseded or ()), *(d.value for d in piece.distractors or ()))
                  if TITLE_WORD_RE.search(v)}
        for _, _, turn in _turns(record):
            if turn.role == "user":
                total += 1
                found += any(_written(turn.text, v) for v in values)
    return found, total


def _written(text: str, value: str) -> bool:
    """Whether ``text`` says ``value`` with its headers' capitals where speech has none: anywhere but
    at a sentence's start, where only its first word may be capitalised ("Amount for that note")."""
    for match in re.finditer(re.escape(value), text):
        starts = not text[:match.start()].strip() or text[:match.start()].rstrip()[-1] in ".!?:"
        if not starts or TITLE_WORD_RE.search(value[1:]):
            return True
    return False


def _naming_words(about: str) -> set[str]:
    return {w for w in _WORD_RE.findall(about.lower()) if w not in _FUNCTION_WORDS and len(w) > 1}


def _stands_alone(text: str, value: str, words: set[str], asked: bool) -> bool:
    """Does this value turn say what the value is for on its own? It names the work (a word of
    its name outside the value) and is not a short answer (:data:`SHORT_ANSWER` words besides the
    value) to the assistant's question just before it, which holds the "what"."""
    rest = _WORD_RE.findall(text.replace(value, " "))
    return bool(words & set(rest)) and not (asked and len(rest) <= SHORT_ANSWER)


def derived_share(records: Records) -> tuple[float, int]:
    """The share of memory pieces whose value is derived (``derived``): said in no turn, given by
    two or more evidence turns (its relation's and its anchor's); and how many pieces there are."""
    pieces = derived = 0
    for record in typed_records(records):
        texts = [_low(t) for _, _, t in _turns(record)]
        for piece in record.memory:
            pieces += 1
            value = piece.value.lower().strip()
            marked = sum(piece.id in (t.evidence or []) for _, _, t in _turns(record))
            derived += piece.derived is not None and bool(value) and marked >= 2 and not any(value in t for t in texts)
    return (derived / pieces if pieces else 0.0), pieces


def two_turn_share(records: Records) -> tuple[float, int]:
    """Among memory pieces whose final value is said in a user turn marked as their evidence,
    the share for which no such turn stands alone (:func:`_stands_alone`; a derived value never
    does): the value is pinned down only with another turn. And how many pieces were judged."""
    judged = alone = 0
    for record in typed_records(records):
        turns: list[tuple[Turn, bool]] = []  # user turns, and whether a same-thread question came just before
        for session in record.dialogue:
            before: Turn | None = None
            for turn in session.turns:
                if turn.role == "user":
                    asked = before is not None and before.role == "assistant" and before.text.rstrip().endswith("?") \
                        and bool(turn.thread) and before.thread == turn.thread
                    turns.append((turn, asked))
                before = turn
        for piece in record.memory:
            value, words = _said(piece), _naming_words(piece.about or "")
            holding = [(_low(t), asked) for t, asked in turns
                       if piece.id in (t.evidence or []) and value and value in _low(t)]
            if not holding or not words:
                continue
            judged += 1
            # a derived value is pinned down by its anchor's turn as well, whatever its relation names
            alone += piece.derived is None and any(_stands_alone(text, value, words, asked)
                                                   for text, asked in holding)
    return ((judged - alone) / judged if judged else 0.0), judged


def _last_at(texts: list[tuple[str, date | None]], value: str) -> tuple[int, int] | None:
    """The last (turn, place) of ``texts`` (lower-cased, with the day each was said) naming
    ``value``, as written or, for a day or a moment, in words."""
    for index in range(len(texts) - 1, -1, -1):
        at = last_named(texts[index][0], value, texts[index][1])
        if at >= 0:
            return index, at
    return None


def namings_per_work(records: Records) -> list[int]:
    """For each task's work (the memory pieces sharing an ``about`` or a thread), how many of its
    namings (``generators.work_names.namings`` of each of its abouts: the full name, shorter
    ones, "that one") its user turns say, longest first, each as a phrase of its own: a reader
    must know them all for one work."""
    out = []
    for record in typed_records(records):
        works: list[tuple[set[str], set[str]]] = []  # (abouts, threads), merged where they meet
        for piece in record.memory:
            if not (piece.about and piece.thread):
                continue
            abouts, threads = {piece.about}, {piece.thread}
            for work in [w for w in works if w[0] & abouts or w[1] & threads]:
                works.remove(work)
                abouts |= work[0]
                threads |= work[1]
            works.append((abouts, threads))
        for abouts, threads in works:
            names = sorted({n.lower() for about in abouts for n in namings(about)}, key=lambda n: (-len(n), n))
            used: set[str] = set()
            for _, _, turn in _turns(record):
                if turn.role != "user" or turn.thread not in threads:
                    continue
                low = _low(turn)
                for name in names:
                    pattern = rf"(?<!\w){re.escape(name)}(?!\w)"
                    if re.search(pattern, low):
                        used.add(name)
                        low = re.sub(pattern, " ", low)
            out.append(len(used))
    return out


def turned_down_after_final(records: Records) -> tuple[float, int]:
    """Among memory pieces with a superseded or a near-miss value, the share where one of those
    is said in the piece's thread (turns marked with its thread) after the last mention of the
    final value; and how many pieces were judged (those whose final value is said there)."""
    judged = later = 0
    for record in typed_records(records):
        by_thread: dict[str, list[tuple[str, date | None]]] = defaultdict(list)
        days = [date.fromisoformat(session.date) for session in record.dialogue]
        for si, _, turn in _turns(record):
            by_thread[turn.thread or ""].append((_low(turn), days[si]))
        for piece in record.memory:
            final = _said(piece)
            wrong = [v.lower() for v in piece.superseded or []]
            wrong += [d.value.lower() for d in piece.distractors or []]
            wrong = [v for v in wrong if v.strip() and v not in final]
            texts = by_thread.get(piece.thread or "", [])
            final_at = _last_at(texts, final) if final else None
            if not wrong or final_at is None:
                continue
            judged += 1
            later += any((at := _last_at(texts, v)) is not None and at > final_at for v in wrong)
    return (later / judged if judged else 0.0), judged


def same_question_answers(records: Records) -> dict[str, int]:
    """The assistant's small-talk questions (no ``thread`` mark, ending in "?") followed by a
    user turn: ``asked``; ``same_day``: questions (names aside) answered two or more ways on one
    day, counted once a day; ``history``: questions answered two or more ways in one history."""
    asked = same_day = history = 0
    for record in typed_records(records):
        seen: dict[str, set[str]] = defaultdict(set)
        for session in record.dialogue:
            today: dict[str, set[str]] = defaultdict(set)
            for turn, reply in pairwise(session.turns):
                text = turn.text.rstrip()
                if turn.role != "assistant" or turn.thread or not text.endswith("?") \
                        or reply.role != "user" or reply.thread:
                    continue
                asked += 1
                question = near_key(re.split(r"(?<=[.!?])\s+", text)[-1])
                answer = near_key(reply.text)
                today[question].add(answer)
                seen[question].add(answer)
            same_day += sum(len(answers) > 1 for answers in today.values())
        history += sum(len(answers) > 1 for answers in seen.values())
    return {"asked": asked, "same_day": same_day, "history": history}


# Words a reaction may share with its line without echoing it: function words and the words of
# how people react ("sounds lovely", "poor you") rather than of what was said.
_REACTION_WORDS = COMMON_WORDS | frozenset((
    "ah", "aw", "ha", "ooh", "ugh", "oof", "mm", "hmm", "sounds", "sound", "lovely", "nice", "nicely", "really",
    "very", "much", "more", "most", "fun", "funny", "rough", "poor", "sorry", "glad", "happy", "love", "loved",
    "amazing", "brilliant", "classic", "gold", "pure", "stuff", "pain", "annoying", "call", "thing", "things",
    "bit", "lot", "today", "tonight", "morning", "afternoon", "evening", "night", "hello", "week", "weekend",
    "little", "long", "quite", "pretty", "made", "make", "can't", "always",
    # a farewell is answered in its own words ("wish me luck" -> "Good luck!", "back soon" -> "No rush back")
    "back", "luck", "rush", "soon", "honestly", "okay"))
_WORDS_CASED = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _echo_words(line: str) -> set[str]:
    """The words of ``line`` that a reaction repeating them echoes: names (capitalised past a
    sentence's first word) and content words of four letters or more."""
    out: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+", line):
        for i, word in enumerate(_WORDS_CASED.findall(sentence)):
            low = word.lower().removesuffix("'s")
            if low in _REACTION_WORDS or word == "I":
                continue
            if (i and word[0].isupper()) or len(low) >= 4:
                out.add(low)
    return out


def echoed(line: str, reaction: str) -> str | None:
    """The word of ``line`` that ``reaction`` repeats (a name or a content word), or None."""
    words = _echo_words(line)
    for word in _WORDS_CASED.findall(reaction):
        if word.lower().removesuffix("'s") in words:
            return word
    return None


def reaction_of(text: str) -> str:
    """The reaction part of an assistant's small-talk turn: all of it but a last question."""
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sentences[:-1] if sentences[-1].endswith("?") else sentences)


def small_talk_fit(records: Records) -> dict[str, int]:
    """Small talk (turns without a ``thread`` mark): ``reactions``, assistant turns reacting to a
    user line (the part before a closing question); ``echoes``, those repeating a name or content
    word of it (:func:`echoed`); ``judged``, follow-up questions and answers read as a bank
    question and one of its answers; ``mismatched``, those whose answer gives no kind the
    question expects."""
    out = {"reactions": 0, "echoes": 0, "judged": 0, "mismatched": 0}
    for record in typed_records(records):
        for session in record.dialogue:
            for before, turn in pairwise(session.turns):
                if before.thread or turn.thread or before.role == turn.role:
                    continue
                said, reply = before.text, turn.text
                if before.role == "user":
                    reaction = reaction_of(reply)
                    if reaction:
                        out["reactions"] += 1
                        out["echoes"] += echoed(said, reaction) is not None
                elif said.rstrip().endswith("?"):
                    verdict = fits(said, reply)
                    if verdict is not None:
                        out["judged"] += 1
                        out["mismatched"] += not verdict
    return out


def history_tokens(records: Records) -> list[int]:
    """Tokens of each history's utterances (the counter of :mod:`backends.tokens`; a build's
    own count when it was made with the same counter)."""
    out = []
    for record in typed_records(records):
        counted = record.provenance.tokens or {}
        if counted.get("counter") == counter_name() and isinstance(counted.get("dialogue"), int):
            out.append(int(counted["dialogue"]))
        else:
            out.append(sum(count_tokens(t.text) for _, _, t in _turns(record)))
    return out
