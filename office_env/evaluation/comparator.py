"""A small, safe comparator language for spreadsheet cells (never ``eval``).

Grammar: ``OP OPERAND`` where OP is one of ``== != > >= < <=`` and OPERAND is a number
(``100``, ``-3.5``, ``1,200``) or a quoted string (``"Done"``, ``'Done'``; only ``==`` and
``!=`` take strings); or ``in [V, ...]`` / ``not in [V, ...]`` with numbers or quoted strings.
OfficeBench's own forms ``lambda x: int(x) >= 90`` (also ``float(x)``, ``str(x)``, ``x``) and
``lambda x: x in ['1', '2']`` are recognised by pattern and mapped to the same grammar; nothing
else is accepted. A comparator longer than ``MAX_COMPARATOR_CHARS`` is refused before matching
(criteria come from strangers, and a list pattern backtracks quadratically on long runs of
spaces), and error messages quote at most the first 80 characters.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, cast

from office_env.errors import OfficeError
from office_env.limits import MAX_COMPARATOR_CHARS

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_ITEM_NUMBER = r"[-+]?\d+(?:\.\d+)?"  # inside a list a comma separates items
_LITERAL = rf"""(?:{_NUMBER}|"[^"]*"|'[^']*')"""
_ITEM = rf"""(?:{_ITEM_NUMBER}|"[^"]*"|'[^']*')"""
_LITERAL_RE = re.compile(rf"""\s*(?:({_NUMBER})|"([^"]*)"|'([^']*)')\s*""")
_EXPR = (rf"""(?P<op>==|!=|>=|<=|>|<|not\s+in|in)\s*"""
         rf"""(?P<operand>{_LITERAL}|\[\s*{_ITEM}(?:\s*,\s*{_ITEM})*\s*,?\s*\])""")
_PLAIN_RE = re.compile(rf"^\s*{_EXPR}\s*$")
_LAMBDA_RE = re.compile(
    rf"""^\s*lambda\s+(?P<var>\w+)\s*:\s*(?:(?:int|float|str)\s*\(\s*(?P=var)\s*\)|(?P=var))\s*{_EXPR}\s*$"""
)
_NUM_VALUE_RE = re.compile(rf"^\s*{_NUMBER}\s*$")

Literal = float | str


def _literal(text: str) -> Literal:
    number, dq, sq = cast("re.Match[str]", _LITERAL_RE.fullmatch(text)).groups()  # an item the grammar matched
    if number is not None:
        return float(number.replace(",", ""))
    return dq if dq is not None else sq


def _show(item: Literal) -> str:
    return f'"{item}"' if isinstance(item, str) else f"{item:g}"


@dataclass(frozen=True)
class Comparator:
    op: str
    operand: Literal | tuple[Literal, ...]

    def __str__(self) -> str:
        if isinstance(self.operand, tuple):
            return f"{self.op} [{', '.join(_show(i) for i in self.operand)}]"
        return f"{self.op} {_show(self.operand)}"

    def test(self, value: Any) -> tuple[bool, str]:
        """Apply to a cell value; return (passed, explanation)."""
        if isinstance(self.operand, tuple):
            found = any(_same(value, item) for item in self.operand)
            ok = found if self.op == "in" else not found
            return ok, f"{value!r} {self} is {ok}"
        if isinstance(self.operand, str):
            text = "" if value is None else str(value)
            ok = _OPS[self.op](text.strip(), self.operand)
            return ok, f"{text!r} {self.op} {self.operand!r} is {ok}"
        number = as_number(value)
        if number is None and self.op == "!=":  # an empty cell or a word is not that number
            return True, f"{value!r} is not a number, so it is not {_show(self.operand)}"
        if number is None:
            return False, f"{value!r} is not a number, so it cannot be compared with {self}"
        ok = _OPS[self.op](number, self.operand)
        return ok, f"{number:g} {self} is {ok}"


def _same(value: Any, item: Literal) -> bool:
    """Equal as text, or equal as numbers when both read as numbers ('3' equals 3.0)."""
    text = "" if value is None else str(value).strip()
    if isinstance(item, str) and text == item:
        return True
    got, want = as_number(value), as_number(item)
    return got is not None and want is not None and got == want


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and _NUM_VALUE_RE.match(value):
        return float(value.replace(",", ""))
    return None


def parse(text: Any) -> Comparator:
    """Parse a comparator or raise ``OfficeError`` saying what is accepted."""
    if not isinstance(text, str):
        raise OfficeError(f"comparator must be a string like '> 100', got {type(text).__name__}")
    if len(text) > MAX_COMPARATOR_CHARS:
        raise OfficeError(f"comparator {text[:80]!r}... is {len(text)} characters long; the limit is "
                          f"{MAX_COMPARATOR_CHARS}")
    match = _PLAIN_RE.match(text) or _LAMBDA_RE.match(text)
    if not match:
        raise OfficeError(
            f"comparator {text!r} is not allowed; use OP VALUE with OP in == != > >= < <= "
            "and VALUE a number or a quoted string (e.g. '>= 90', '== \"Done\"'), or in [V, ...]"
        )
    op = " ".join(match.group("op").split())
    operand = match.group("operand").strip()
    if op in ("in", "not in"):
        if not operand.startswith("["):
            raise OfficeError(f"comparator {text!r}: {op} needs a list, e.g. in [1, 2, 3]")
        items = tuple(_literal(m.group(0)) for m in re.finditer(_ITEM, operand[1:-1]))
        return Comparator(op, items)
    if operand.startswith("["):
        raise OfficeError(f"comparator {text!r}: a list goes only with in / not in")
    value = _literal(operand)
    if isinstance(value, str) and op not in ("==", "!="):
        raise OfficeError(f"comparator {text!r}: strings can only be compared with == or !=")
    return Comparator(op, value)
