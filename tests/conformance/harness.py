"""Runs a Flink-oracle conformance case and compares its final table with Flink's.

The comparison follows shared/conformance/README.md: apply the retract changelog
(+I/+U add a row, -U/-D remove one equal row; removing a row never added is a bug),
then compare multisets of rendered rows, numbers by value.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from types import ModuleType
from typing import Any

from planner.statements import Query
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.printing import jsonl_lines


@dataclass
class CaseRun:
    changelog: list[dict[str, Any]]


def load_module_at(name: str, path: Path) -> ModuleType:
    """Import the test helper module at `path` as `name`, once (cached in sys.modules).

    Tests run with --import-mode=importlib, so helper files beside tests (jobkit.py,
    aggsql.py) are not importable by name; every directory that shares one loads it here."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def load_case(case_dir: Path) -> dict[str, Any]:
    return json.loads((case_dir / "case.json").read_text())


def run_case(case_dir: Path, mode: str) -> CaseRun:
    """Run case.sql with the case folder as working directory; return the changelog rows
    of the final query as `{"op", "row"}` dicts (rendered as the SQL client renders)."""
    return CaseRun(run_script((case_dir / "case.sql").read_text(), case_dir, mode))


def run_script(script: str, cwd: Path, mode: str) -> list[dict[str, Any]]:
    """Run a script whose last statement is a query, with `cwd` as working directory (so
    relative file paths resolve there); the query's changelog as `{"op", "row"}` dicts.
    Shared with the Nexmark tests (tests/nexmark), which run the same way."""
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        *setup, last = env.parse(script)
        for stmt in setup:
            env.execute_statement(stmt).wait()
        assert isinstance(last, Query), "a case ends with one query"
        result = env.execute_statement(last)
        lines = list(jsonl_lines(result.batches(), result.fields, result.time_zone))
    finally:
        os.chdir(old)
    return [json.loads(line) for line in lines]


class ChangelogError(AssertionError):
    """The changelog retracted a row that was not emitted (or already retracted)."""


def fold_changes(changes: Iterable[tuple[str, tuple[Any, ...]]]) -> Counter[tuple[Any, ...]]:
    """The final table of a retract changelog of (op, row) pairs: +I/+U add a row, -U/-D
    remove one equal row. Strict: a retraction must find its row (else `ChangelogError`).
    The one fold the conformance, Nexmark, property and operator tests share."""
    table: Counter[tuple[Any, ...]] = Counter()
    for i, (op, row) in enumerate(changes):
        if op in ("+I", "+U"):
            table[row] += 1
        else:
            if table[row] <= 0:
                raise ChangelogError(f"change #{i} {op}{list(row)} retracts a row that is not in the table")
            table[row] -= 1
    return +table


def final_table(changelog: list[dict[str, Any]], upsert_key: list[int] | None = None) -> Counter[tuple[Any, ...]]:
    """The final table of a `{"op", "row"}` changelog. Retract mode by default (a -U/-D
    must find its row); with `upsert_key` (column indices) the last row per key wins."""
    if upsert_key is not None:
        by_key: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        for rec in changelog:
            row = tuple(rec["row"])
            key = tuple(row[i] for i in upsert_key)
            if rec["op"] in ("+I", "+U"):
                by_key[key] = row
            elif rec["op"] == "-D":
                by_key.pop(key, None)
        return Counter(by_key.values())
    return fold_changes((rec["op"], tuple(rec["row"])) for rec in changelog)


def _norm_value(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, str):
        try:
            d = Decimal(v)
        except InvalidOperation:
            return ("s", v)
        if d.is_nan():
            return ("nan",)
        return ("n", d.normalize()) if d.is_finite() else ("s", v)
    return ("s", str(v))


def normalize(table: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for row, n in table.items():
        out[tuple(_norm_value(v) for v in row)] += n
    return out


def expected_table(case_dir: Path, mode: str) -> Counter[tuple[Any, ...]]:
    lines = (case_dir / "expected" / f"{mode}.jsonl").read_text().splitlines()
    return Counter(tuple(json.loads(line)["row"]) for line in lines if line.strip())


def diff(actual: Counter[tuple[Any, ...]], expected: Counter[tuple[Any, ...]]) -> str:
    missing = expected - actual
    extra = actual - expected
    parts = []
    if missing:
        parts.append("missing rows:\n" + "\n".join(f"  {list(r)} x{n}" for r, n in sorted(missing.items(), key=str)))
    if extra:
        parts.append("unexpected rows:\n" + "\n".join(f"  {list(r)} x{n}" for r, n in sorted(extra.items(), key=str)))
    return "\n".join(parts)
