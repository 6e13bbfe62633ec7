"""Fixtures for every runtime test directory (operators, executor, aggregates, ...):
`kit`, the job-building test kit in operators/jobkit.py (loaded by path because tests run
with --import-mode=importlib, and cached in sys.modules so all directories share one
copy), and `spill_writes`, the spill files a test's jobs write."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pyarrow as pa
import pytest

from runtime import spill

# jobkit and aggsql fold changelogs with the conformance harness (tests/conformance/harness.py).
sys.path.insert(0, str(Path(__file__).parents[2] / "conformance"))
from harness import load_module_at  # noqa: E402


@pytest.fixture(scope="session")
def kit() -> ModuleType:
    return load_module_at("streamsql_runtime_jobkit", Path(__file__).resolve().parent / "operators" / "jobkit.py")


@dataclass
class SpillWrites:
    """The spill files written (runtime/spill.py `SpillFiles.write`): rows and partition of each."""

    rows: list[int] = field(default_factory=list)
    partitions: list[int] = field(default_factory=list)

    def clear(self) -> None:
        self.rows.clear()
        self.partitions.clear()


@pytest.fixture
def spill_writes(monkeypatch: pytest.MonkeyPatch) -> SpillWrites:
    """Records every spill file the test's jobs write (and still writes it)."""
    seen = SpillWrites()
    write = spill.SpillFiles.write

    def counted(self: spill.SpillFiles, partition: int, table: pa.Table) -> None:
        seen.rows.append(table.num_rows)
        seen.partitions.append(partition)
        write(self, partition, table)

    monkeypatch.setattr(spill.SpillFiles, "write", counted)
    return seen
