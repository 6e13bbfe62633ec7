"""Shared helpers for property tests: run one SQL script in STREAMING and BATCH mode over
small CSV tables and compare the streaming changelog, folded strictly, with the batch rows.

Use the fixture (works with hypothesis when `HealthCheck.function_scoped_fixture` is
suppressed; the helper keeps no state between calls):

    def test_x(run_both_modes):
        r = run_both_modes(
            "SELECT k, SUM(v) AS s FROM t GROUP BY k",
            {"t": ("k STRING, v INT", [("a", 1), ("b", None)])},
        )
        assert r.streaming == r.batch

`tables` maps a table name to (column DDL, rows); each table becomes a filesystem/CSV
table (NULL written as `NULL`, so do not use the string 'NULL' as a value). The script may
hold several statements (CREATE VIEW, ...); the last one must be a query. Streaming runs
with `table.exec.source.batch-rows` = `batch_rows` (default 1: every row is its own batch,
so retractions interleave as much as possible). `fold_changelog` raises
`harness.ChangelogError` when a -U/-D retracts a row that is not in the table at that point.
"""

from __future__ import annotations

import csv
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# The strict fold is shared with the conformance harness (tests/conformance/harness.py).
sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))
from harness import fold_changes  # noqa: E402

from planner.statements import Query
from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds
from streamsql import EnvironmentSettings, TableEnvironment

Row = tuple[Any, ...]
Tables = dict[str, tuple[str, Sequence[Sequence[Any]]]]


@dataclass
class BothModes:
    """`changelog`: the streaming (op, row) pairs in order; `streaming`: their strict fold;
    `batch`: the batch-mode rows (as a multiset)."""

    changelog: list[tuple[str, Row]]
    streaming: Counter[Row]
    batch: Counter[Row]


def fold_changelog(changelog: list[tuple[str, Row]]) -> Counter[Row]:
    """The final table of a changelog; strict: a retraction must find its row."""
    return fold_changes(changelog)


def _write_tables(tables: Tables, folder: Path) -> str:
    ddl = []
    for name, (columns, rows) in tables.items():
        path = folder / f"{name}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            for r in rows:
                w.writerow(["NULL" if v is None else v for v in r])
        ddl.append(
            f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', 'path' = '{path}', "
            "'format' = 'csv', 'csv.null-literal' = 'NULL');"
        )
    return "\n".join(ddl)


def run_sql(sql_script: str, tables: Tables, mode: str, batch_rows: int = 1) -> list[tuple[str, Row]]:
    """Run the script in `mode` ("streaming" | "batch"); the last statement's changelog."""
    with tempfile.TemporaryDirectory(prefix="streamsql-prop-") as tmp:
        script = _write_tables(tables, Path(tmp)) + "\n" + sql_script.strip().rstrip(";") + ";"
        conf = {"table.exec.source.batch-rows": str(batch_rows)}
        env = TableEnvironment.create(EnvironmentSettings(mode, conf))
        *setup, last = env.parse(script)
        for stmt in setup:
            env.execute_statement(stmt).wait()
        assert isinstance(last, Query), "the script must end with a query"
        result = env.execute_statement(last)
        out: list[tuple[str, Row]] = []
        for batch in result.batches():
            kinds = row_kinds(batch)
            cols = [batch.column(i).to_pylist() for i in range(data_width(batch))]
            for i in range(batch.num_rows):
                out.append((ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)))
        return out


def run_both_modes(sql_script: str, tables: Tables, batch_rows: int = 1) -> BothModes:
    """Streaming (strictly folded) and batch results of the same script."""
    changelog = run_sql(sql_script, tables, "streaming", batch_rows)
    streaming = fold_changelog(changelog)
    batch = Counter(row for op, row in run_sql(sql_script, tables, "batch") if op in ("+I", "+U"))
    return BothModes(changelog, streaming, batch)


@pytest.fixture(name="run_both_modes")
def run_both_modes_fixture() -> Callable[..., BothModes]:
    """The `run_both_modes` helper as a fixture (conftest modules are not importable)."""
    return run_both_modes


@pytest.fixture(name="fold_changelog")
def fold_changelog_fixture() -> Callable[[list[tuple[str, Row]]], Counter[Row]]:
    return fold_changelog
