"""Fixture `kit`: the job-building test kit in operators/jobkit.py, for every runtime
test directory (operators, executor, aggregates, ...). Loaded by path because tests run
with --import-mode=importlib, and cached in sys.modules so all directories share one copy."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

# jobkit and aggsql fold changelogs with the conformance harness (tests/conformance/harness.py).
sys.path.insert(0, str(Path(__file__).parents[2] / "conformance"))
from harness import load_module_at  # noqa: E402


@pytest.fixture(scope="session")
def kit() -> ModuleType:
    return load_module_at("streamsql_runtime_jobkit", Path(__file__).resolve().parent / "operators" / "jobkit.py")
