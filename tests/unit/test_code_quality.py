"""The whole repo stays `ruff check`, `ruff format --check` and `mypy` clean (config in
pyproject.toml), so lint, format and type drift fail the test suite instead of piling up."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ruff") is None, reason="ruff is not installed")


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ruff_check_is_clean() -> None:
    result = _ruff("check", "--no-cache", ".")
    assert result.returncode == 0, f"ruff check found problems:\n{result.stdout}\n{result.stderr}"


def test_ruff_format_is_clean() -> None:
    result = _ruff("format", "--check", "--no-cache", ".")
    assert result.returncode == 0, f"ruff format would reformat files:\n{result.stdout}\n{result.stderr}"


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed")
def test_mypy_clean() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False
    )
    assert p.returncode == 0, p.stdout + p.stderr
