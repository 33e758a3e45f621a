"""The safe comparator grammar for spreadsheet cells: what it accepts, refuses and how it tests."""

from __future__ import annotations

import pytest

from office_env.errors import OfficeError
from office_env.evaluation.comparator import Comparator, as_number, parse


@pytest.mark.parametrize(
    "text, op, operand",
    [
        ("> 100", ">", 100.0),
        ("<= 3.5", "<=", 3.5),
        ('== "Done"', "==", "Done"),
        ("!= 'x'", "!=", "x"),
        (">= 1,200", ">=", 1200.0),
        ("< -3.5", "<", -3.5),
        (">=90", ">=", 90.0),
        # OfficeBench's own lambda form is recognised by pattern, never evaluated
        ("lambda x: int(x) >= 90", ">=", 90.0),
        ("lambda x: float(x) < 3.5", "<", 3.5),
        ('lambda x: x == "Done"', "==", "Done"),
        ("lambda value: str(value) != 'Open'", "!=", "Open"),
    ],
)
def test_accepted_forms_parse_to_operator_and_operand(text, op, operand):
    comp = parse(text)
    assert comp.op == op
    assert comp.operand == operand
    assert type(comp.operand) is type(operand)


@pytest.mark.parametrize(
    "text, hint",
    [
        ("__import__('os').system('x')", "not allowed"),
        ("lambda x: os.system(x)", "not allowed"),
        ("lambda x: int(y) > 3", "not allowed"),  # the lambda must use its own argument
        ("> abc", "not allowed"),
        ("1 +1", "not allowed"),
        ("", "not allowed"),
        ("== Done", "not allowed"),  # strings must be quoted
        ("> 1; import os", "not allowed"),
        ('< "text"', "only be compared with == or !="),
        ("lambda x: x >= 'b'", "only be compared with == or !="),
        ("in 5", "needs a list"),
        ("== [1, 2]", "a list goes only with in / not in"),
        ("in [1, os]", "not allowed"),
        ("in []", "not allowed"),
    ],
)
def test_refused_forms_raise_office_error_with_help(text, hint):
    with pytest.raises(OfficeError) as info:
        parse(text)
    message = str(info.value)
    assert hint in message
    if hint == "not allowed":
        # the message teaches the accepted grammar
        assert "'>= 90'" in message and "==" in message


@pytest.mark.parametrize("value, type_name", [(5, "int"), (None, "NoneType"), (["> 1"], "list"), (3.5, "float")])
def test_non_strings_are_refused_naming_the_type(value, type_name):
    with pytest.raises(OfficeError, match=f"must be a string.*got {type_name}"):
        parse(value)


def test_parse_never_evaluates_code(monkeypatch):
    import builtins

    def boom(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("eval/exec must not be used")

    monkeypatch.setattr(builtins, "eval", boom)
    monkeypatch.setattr(builtins, "exec", boom)
    assert parse("lambda x: int(x) >= 90").test(95)[0] is True
    with pytest.raises(OfficeError):
        parse("__import__('os').system('echo hacked')")


@pytest.mark.parametrize(
    "text, value, expected",
    [
        ("> 100", 101, True),
        ("> 100", 100, False),
        (">= 100", 100, True),
        ("< 3.5", 3.4, True),
        ("< 3.5", 3.5, False),
        ("<= 3.5", 3.5, True),
        ("== 85", 85.0, True),
        ("!= 85", 85, False),
        (">= 1,200", 1200, True),
        (">= 1,200", 1199.99, False),
        # numeric strings are numbers, with or without thousands separators
        ("> 100", "150", True),
        ("> 100", " 99 ", False),
        ("> 1000", "1,200", True),
        ("lambda x: int(x) >= 90", "92.5", True),
        ("lambda x: int(x) >= 90", 89, False),
    ],
)
def test_numeric_comparisons(text, value, expected):
    ok, why = parse(text).test(value)
    assert ok is expected
    assert str(ok) in why


@pytest.mark.parametrize("value", ["abc", None, True, "12 apples", ""])
def test_non_numbers_fail_numeric_comparators_with_explanation(value):
    ok, why = parse(">= 0").test(value)
    assert ok is False
    assert "not a number" in why
    assert repr(value) in why


@pytest.mark.parametrize(
    "text, value, expected",
    [
        ('== "Done"', "Done", True),
        ('== "Done"', " Done ", True),  # surrounding spaces in the cell are ignored
        ('== "Done"', "done", False),  # string equality is exact
        ('== "Done"', "Open", False),
        ("!= 'Open'", "Done", True),
        ("!= 'Open'", "Open", False),
        ('== "85"', 85, True),  # a number cell compared as text
        ('== ""', None, True),  # an empty cell is the empty string
        ('!= ""', None, False),
    ],
)
def test_string_comparisons(text, value, expected):
    ok, why = parse(text).test(value)
    assert ok is expected
    assert str(ok) in why


@pytest.mark.parametrize(
    "text, op, items",
    [
        ("in [1, 2, 3]", "in", (1.0, 2.0, 3.0)),
        ("not in ['Open', \"Blocked\"]", "not in", ("Open", "Blocked")),
        ("lambda x: x in ['1', '2']", "in", ("1", "2")),
        ("lambda x: int(x) not  in [90, 95,]", "not in", (90.0, 95.0)),
    ],
)
def test_membership_forms(text, op, items):
    comp = parse(text)
    assert (comp.op, comp.operand) == (op, items)


@pytest.mark.parametrize(
    "text, value, expected",
    [
        ("in [1, 2, 3]", 2, True),
        ("in [1, 2, 3]", "3", True),  # numeric strings equal numbers
        ("in [1, 2, 3]", 4, False),
        ("lambda x: x in ['1', '2']", 1, True),
        ("lambda x: x in ['1', '2']", "12", False),
        ("in ['Done', 'Closed']", " Done ", True),
        ("in ['Done', 'Closed']", "done", False),
        ("not in ['Open']", "Done", True),
        ("not in ['Open']", "Open", False),
        ("not in ['Open']", None, True),
    ],
)
def test_membership_semantics(text, value, expected):
    ok, why = parse(text).test(value)
    assert ok is expected
    assert str(ok) in why


def test_str_renders_the_comparator_back():
    assert str(parse(">= 1,200")) == ">= 1200"
    assert str(parse("lambda x: x == 'Done'")) == '== "Done"'
    assert str(Comparator("<", 3.5)) == "< 3.5"
    assert str(parse("in [1, 'a']")) == 'in [1, "a"]'


@pytest.mark.parametrize(
    "value, expected",
    [(3, 3.0), (2.5, 2.5), ("1,200.50", 1200.5), ("-4", -4.0), (True, None), ("1,20", None), ("x1", None), (None, None)],
)
def test_as_number(value, expected):
    assert as_number(value) == expected
