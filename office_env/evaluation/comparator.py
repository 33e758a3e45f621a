"""A small, safe comparator language for spreadsheet cells (never ``eval``).

Grammar: ``OP OPERAND`` where OP is one of ``== != > >= < <=`` and OPERAND is a number
(``100``, ``-3.5``, ``1,200``) or a quoted string (``"Done"``, ``'Done'``; only ``==`` and
``!=`` take strings). OfficeBench's own form ``lambda x: int(x) >= 90`` (also ``float(x)``,
``x``) is recognised by pattern and mapped to the same grammar; nothing else is accepted.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any, Callable

from office_env.errors import OfficeError

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_PLAIN_RE = re.compile(rf"""^\s*(==|!=|>=|<=|>|<)\s*(?:({_NUMBER})|"([^"]*)"|'([^']*)')\s*$""")
_LAMBDA_RE = re.compile(
    rf"""^\s*lambda\s+(\w+)\s*:\s*(?:(int|float|str)\s*\(\s*\1\s*\)|\1)\s*(==|!=|>=|<=|>|<)\s*"""
    rf"""(?:({_NUMBER})|"([^"]*)"|'([^']*)')\s*$"""
)
_NUM_VALUE_RE = re.compile(rf"^\s*{_NUMBER}\s*$")


@dataclass(frozen=True)
class Comparator:
    op: str
    operand: float | str

    def __str__(self) -> str:
        if isinstance(self.operand, str):
            return f'{self.op} "{self.operand}"'
        return f"{self.op} {self.operand:g}"

    def test(self, value: Any) -> tuple[bool, str]:
        """Apply to a cell value; return (passed, explanation)."""
        if isinstance(self.operand, str):
            text = "" if value is None else str(value)
            ok = _OPS[self.op](text.strip(), self.operand)
            return ok, f"{text!r} {self.op} {self.operand!r} is {ok}"
        number = as_number(value)
        if number is None:
            return False, f"{value!r} is not a number, so it cannot be compared with {self.op} {self.operand:g}"
        ok = _OPS[self.op](number, self.operand)
        return ok, f"{number:g} {self.op} {self.operand:g} is {ok}"


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
    match = _PLAIN_RE.match(text)
    if match:
        op, number, dq, sq = match.groups()
    else:
        match = _LAMBDA_RE.match(text)
        if not match:
            raise OfficeError(
                f"comparator {text!r} is not allowed; use OP VALUE with OP in == != > >= < <= "
                "and VALUE a number or a quoted string, e.g. '>= 90' or '== \"Done\"'"
            )
        _, _, op, number, dq, sq = match.groups()
    if number is not None:
        return Comparator(op, float(number.replace(",", "")))
    if op not in ("==", "!="):
        raise OfficeError(f"comparator {text!r}: strings can only be compared with == or !=")
    return Comparator(op, dq if dq is not None else sq)
