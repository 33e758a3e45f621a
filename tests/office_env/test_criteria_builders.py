"""Typed criterion builders (office_env/evaluation/builders.py): one per registered check, with
the check's arguments as keyword-only parameters."""

import inspect

import pytest

from office_env.evaluation import CHECKS, validate_criteria
from office_env.evaluation import builders as cr


def test_every_registered_check_has_a_builder_named_after_it():
    for name, check in CHECKS.items():
        build = getattr(cr, name[len("evaluate_"):])
        params = inspect.signature(build).parameters
        assert list(params) == list(check.args_schema["properties"]), name
        for arg in check.args_schema.get("required", ()):
            assert params[arg].default is inspect.Parameter.empty, (name, arg)


def test_a_builder_writes_the_criterion_the_catalog_accepts_in_argument_order():
    made = cr.email_sent(sender="dana", recipient="sam", body_keywords=["14:00", "Room 2"])
    assert made == {"function": "evaluate_email_sent",
                    "args": {"sender": "dana", "recipient": "sam", "body_keywords": ["14:00", "Room 2"]}}
    assert list(made["args"]) == ["sender", "recipient", "body_keywords"]
    assert list(cr.contain(keywords=["x"], file="a.docx", doc_type="docx")["args"]) == ["keywords", "file", "doc_type"]
    validate_criteria([made, cr.file_exist(file="data/a.docx"), cr.answer(number=12, tolerance=0.01)])


def test_a_misspelt_or_missing_argument_is_a_type_error_naming_the_check():
    with pytest.raises(TypeError, match="evaluate_email_sent: .*body"):
        cr.email_sent(sender="dana", body=["x"])
    with pytest.raises(TypeError, match="evaluate_file_exist: missing a required argument: 'file'"):
        cr.file_exist()
    with pytest.raises(TypeError, match=r"answer\(\) takes 0 positional arguments"):
        cr.answer("12")



def test_a_builder_accepts_and_refuses_exactly_the_calls_its_signature_binds():
    # the builders check a call's names against the schema and ask the signature only for its error
    for name in CHECKS:
        build = getattr(cr, name[len("evaluate_"):])
        params = list(inspect.signature(build).parameters)
        required = [p for p in params if inspect.signature(build).parameters[p].default is inspect.Parameter.empty]
        for args in ({}, {p: 1 for p in params}, {p: 1 for p in required}, {**{p: 1 for p in params}, "stray": 1},
                     {p: 1 for p in required[1:]}, {p: 1 for p in params[:1]}, {p: 1 for p in params[1:]}):
            try:
                inspect.signature(build).bind(**args)
                binds = True
            except TypeError as exc:
                binds, error = False, str(exc)
            if binds:
                assert build(**args) == {"function": name, "args": args}
            else:
                with pytest.raises(TypeError) as raised:
                    build(**args)
                assert str(raised.value) == f"{name}: {error}"
