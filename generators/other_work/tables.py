"""The other-work banks compiled for the composer: fragments by section, data rows, and the
fragment lists of each kind, stage and follow-up tag. The banks are read when this module is
first imported (by the composer, on first use)."""

from __future__ import annotations

from collections.abc import Iterable

from generators.other_work.bank import _KEYS, _LONG_VIEW, _TAGS, _TOPIC_SLOTS, _Frag, load

_BANK = load()
_SOURCE = {f: name for name, sec in _BANK.items() for f in (sec.fields or ())}
_DATA = {name: tuple(sec.rows) for name, sec in _BANK.items() if sec.fields}
_FRAGS = {name: tuple(row[0] for row in sec.rows) for name, sec in _BANK.items() if not sec.fields}
_EMPTY: tuple[_Frag, ...] = ()


def _frags(*names: str) -> tuple[_Frag, ...]:
    out: list[_Frag] = []
    for n in names:
        out.extend(_FRAGS.get(n, _EMPTY))
    return tuple(out)


def _value_slots(frags: Iterable[_Frag]) -> frozenset[str]:
    out: set[str] = set()
    for f in frags:
        out |= f.slots
    return frozenset(out - _TOPIC_SLOTS)


# Precomputed fragment lists per (kind, stage) and per tag.
_INTRO = {ks: _frags(f"intro.{ks[0]}.{ks[1]}" if ks[1] else f"intro.{ks[0]}") for ks in _TAGS}
_REACT = {ks: _frags(f"react.{ks[0]}.{ks[1]}", f"react.{ks[0]}") if ks[1] else _frags(f"react.{ks[0]}")
          for ks in _TAGS}
_PROMISE = {(k, s): _frags(f"promise.{k}.{s}", f"promise.{k}", *(("promise",) if k in _LONG_VIEW else ()))
            for k, s in _TAGS}
_CHAT = {(k, s): _frags(f"chat.{k}.{s}", f"chat.{k}") for k, s in _TAGS}
_ASK: dict[tuple[str, str], tuple[_Frag, ...]] = {}
_ANSWER: dict[tuple[str, str, str], tuple[str, tuple[_Frag, ...]]] = {}
_VOLUNTEER: dict[tuple[str, str, str], tuple[_Frag, ...]] = {}
_TAG_REACT: dict[tuple[str, str], tuple[_Frag, ...]] = {}
_TAG_KEYS: dict[tuple[str, str], frozenset[str]] = {}
for (_k, _s), _tags in _TAGS.items():
    for _t in _tags:
        _ASK[(_k, _t)] = _frags(f"ask.{_k}.{_t}")
        _name = f"answer.{_k}.{_t}.{_s}" if f"answer.{_k}.{_t}.{_s}" in _FRAGS else f"answer.{_k}.{_t}"
        _ANSWER[(_k, _s, _t)] = (_name, _FRAGS[_name])
        _VOLUNTEER[(_k, _s, _t)] = tuple(f for f in _FRAGS[_name] if not f.alone)
        _TAG_REACT[(_k, _t)] = _frags(f"react.{_k}.{_t}", f"react.tag.{_t}")
        _TAG_KEYS[(_k, _t)] = _KEYS.get((_k, _t)) or _value_slots(_frags(f"answer.{_k}.{_t}"))
_REACT_ANY = _FRAGS["react.any"]
_CHAT_ANY = _FRAGS["chat.any"]
_LEAD_ASIDE = _FRAGS["lead.aside"]
_LEAD_MORE = _FRAGS["lead.more"]
_ACK = _FRAGS["ack"]
_TAIL = {m: _FRAGS[f"tail.{m}"] for m in ("good", "bad", "neutral", "plan")}
