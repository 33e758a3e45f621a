"""Shared fixtures: a small but real office testbed written with the project's own writers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from office_env import Workspace, default_registry
from office_env.sample import SAMPLE_NOW as NOW
from office_env.sample import write_sample_office as write_office


@pytest.fixture(scope="session")
def _sample_office(tmp_path_factory) -> Path:
    """The sample testbed, written once per run (the writers are the slow part)."""
    return write_office(tmp_path_factory.mktemp("sample") / "testbed")


@pytest.fixture
def testbed(tmp_path: Path, _sample_office: Path) -> Path:
    """A fresh copy of the sample testbed for each test."""
    return Path(shutil.copytree(_sample_office, tmp_path / "testbed", symlinks=True))


@pytest.fixture
def ws(testbed: Path) -> Workspace:
    return Workspace(testbed, now=NOW)


@pytest.fixture
def registry():
    return default_registry()


def write_json(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path
