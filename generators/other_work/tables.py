"""The other-work banks compiled for the composer: fragments by section, data rows, and the
fragment lists of each kind, stage and follow-up tag. The banks are read when this module is
first imported (by the composer, on first use)."""

from __future__ import annotations

from collections.abc import Iterable

from generators.other_work.bank import KEYS, LONG_VIEW, TAGS, TOPIC_SLOTS, Frag, load

BANK = load()
SOURCE = {f: name for name, sec in BANK.items() for f in (sec.fields or ())}
DATA = {name: tuple(sec.rows) for name, sec in BANK.items() if sec.fields}
FRAGS = {name: tuple(row[0] for row in sec.rows) for name, sec in BANK.items() if not sec.fields}
_EMPTY: tuple[Frag, ...] = ()


def _frags(*names: str) -> tuple[Frag, ...]:
    out: list[Frag] = []
    for n in names:
        out.extend(FRAGS.get(n, _EMPTY))
    return tuple(out)


def _value_slots(frags: Iterable[Frag]) -> frozenset[str]:
    out: set[str] = set()
    for f in frags:
        out |= f.slots
    return frozenset(out - TOPIC_SLOTS)


# Precomputed fragment lists per (kind, stage) and per tag.
INTRO = {ks: _frags(f"intro.{ks[0]}.{ks[1]}" if ks[1] else f"intro.{ks[0]}") for ks in TAGS}
REACT = {ks: _frags(f"react.{ks[0]}.{ks[1]}", f"react.{ks[0]}") if ks[1] else _frags(f"react.{ks[0]}")
          for ks in TAGS}
PROMISE = {(k, s): _frags(f"promise.{k}.{s}", f"promise.{k}", *(("promise",) if k in LONG_VIEW else ()))
            for k, s in TAGS}
CHAT = {(k, s): _frags(f"chat.{k}.{s}", f"chat.{k}") for k, s in TAGS}
ASK: dict[tuple[str, str], tuple[Frag, ...]] = {}
ANSWER: dict[tuple[str, str, str], tuple[str, tuple[Frag, ...]]] = {}
VOLUNTEER: dict[tuple[str, str, str], tuple[Frag, ...]] = {}
TAG_REACT: dict[tuple[str, str], tuple[Frag, ...]] = {}
TAG_KEYS: dict[tuple[str, str], frozenset[str]] = {}
for (_k, _s), _tags in TAGS.items():
    for _t in _tags:
        ASK[(_k, _t)] = _frags(f"ask.{_k}.{_t}")
        _name = f"answer.{_k}.{_t}.{_s}" if f"answer.{_k}.{_t}.{_s}" in FRAGS else f"answer.{_k}.{_t}"
        ANSWER[(_k, _s, _t)] = (_name, FRAGS[_name])
        VOLUNTEER[(_k, _s, _t)] = tuple(f for f in FRAGS[_name] if not f.alone)
        TAG_REACT[(_k, _t)] = _frags(f"react.{_k}.{_t}", f"react.tag.{_t}")
        TAG_KEYS[(_k, _t)] = KEYS.get((_k, _t)) or _value_slots(_frags(f"answer.{_k}.{_t}"))
REACT_ANY = FRAGS["react.any"]
CHAT_ANY = FRAGS["chat.any"]
LEAD_ASIDE = FRAGS["lead.aside"]
LEAD_MORE = FRAGS["lead.more"]
ACK = FRAGS["ack"]
TAIL = {m: FRAGS[f"tail.{m}"] for m in ("good", "bad", "neutral", "plan")}
