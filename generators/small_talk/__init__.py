"""Composed small talk: the chat of one person in one week, not lines drawn from a fixed bank.

``SmallTalk`` is made once per history. From the ``rng`` it is given it derives a persona (a
hobby and where they do it, a pet or none, a partner, children, a sibling, a friend and a
neighbour with names, how they get to work and the line or road they take, a street, a cafe, a
park and a bakery near home, a lunch place near the office, a favourite food, a show, a book, a
podcast, a trip later in the year) and then composes openers, closers and small-talk exchanges
that mention that persona, the given colleagues, company, city and projects, and fit the moment
(``when``):

- season and weather from the city's climate and hemisphere (:data:`CITY_CLIMATE`): one weather
  per date, drawn from the season's weights (Singapore has no winter; Melbourne, Auckland and
  Cape Town have theirs in July);
- the weekday: weekend stories on Monday (and the weekend planned on Thursday or Friday is the
  one told on Monday), weekend plans on Thursday and Friday, "last night" not on Monday;
- the time of day: the greeting of the hour, breakfast, sleep and the trip in before 11:00, lunch
  plans from 10:00, lunch stories from 13:00, evening plans from noon;
- rare events (first snow, a heat wave, a holiday of the city's country, a birthday) at most once
  per history; everyday topics at most so often a day (:data:`TOPICS`).

Every utterance is assembled from fragments (alternatives, slots, nested pools), assistant lines
react to what the user just said without repeating its names or things, a follow-up question is
answered by a line of a kind it expects (the banks' ``expects:`` and ``gives:`` tags), and the
object remembers everything it produced: no utterance
repeats within its history (compared case-folded), none says a word twice in a row or a phrase of
three words twice. A persona fact (how long they have lived there, had the pet, done the hobby and
with whom: :data:`_FACT_POOL`) is drawn once and told once, the same way; a story (a ``*.news``
entry) is told once a history, and only a history that has told every one tells one again. A
hobby whose place names a weekday ("my Thursday lessons") happens that evening only. Lines are
short, like real chat: about a dozen tokens (``backends.tokens.count_tokens``), at least
``MIN_WORDS`` words and at most ``MAX_TOKENS`` tokens. Small talk asks for nothing and promises
nothing. ``avoid(text)`` returning False rejects a text (and persona values) containing a task
value; such texts are recomposed. :class:`ValueError` only when nothing can be composed.

The package: ``calendar_facts`` (climate, seasons, holidays), ``bank`` (the fragment banks' slots,
flags and checks; the banks are in the dialogue banks' one format, ``generators.dialogue_bank``),
``tables`` (the banks compiled for fast drawing) and ``composer`` (:class:`SmallTalk`). The banks
are read on first use (the first ``SmallTalk``, or :func:`load`), once.
"""

from __future__ import annotations

from typing import Any

from generators.dialogue_bank import BankError
from generators.small_talk.bank import BANK_DIR, MAX_TOKENS, MIN_WORDS, TOPICS, WordingsExhausted, load, parse_banks
from generators.small_talk.calendar_facts import CITY_CLIMATE, holiday_on


def __getattr__(name: str) -> Any:
    """``SmallTalk`` on first use: importing the composer reads and compiles the banks."""
    if name == "SmallTalk":
        from generators.small_talk.composer import SmallTalk

        return SmallTalk
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SmallTalk", "WordingsExhausted", "BankError", "BANK_DIR", "load", "parse_banks", "CITY_CLIMATE", "TOPICS",
           "holiday_on", "MIN_WORDS", "MAX_TOKENS"]
