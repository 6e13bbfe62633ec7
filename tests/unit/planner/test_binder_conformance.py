"""Bind and plan the conformance queries (001-059, 9xx): output widths match Flink's
expected rows, rejected modes and error cases raise SqlErrors at Flink's positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError, SqlParseError, UnsupportedSqlError
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Query
from runtime.graph import JobGraph

CASES = Path(__file__).resolve().parents[2] / "conformance" / "cases"

# Queries that use SQL features owned by other issues (joins, UNNEST, grouping sets,
# aggregates the runtime does not have yet): they must fail with UnsupportedSqlError.
UNSUPPORTED: set[str] = set()  # 015 / 046 (joins, subqueries) are supported since issue 3


def _cases() -> list[str]:
    out = []
    for d in sorted(CASES.iterdir()):
        if d.name[:3] <= "059" or d.name.startswith("9"):
            out.append(d.name)
    return out


def _plan(case: str, mode: str):
    text = (CASES / case / "case.sql").read_text()
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": mode})
    for st in parse_script(text):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, CreateView):
            catalog.create_view(st, mode.upper())
        elif isinstance(st, Query):
            return planner.plan_query(st)
    raise AssertionError("no query")


def _plan_or_skip(case: str, mode: str):
    """`_plan`, skipping the test when the case calls a function streamsql lacks."""
    try:
        return _plan(case, mode)
    except SqlError as e:
        if e.message.startswith("No match found for function signature"):
            pytest.skip(e.message)
        raise


# Modes Flink rejects that streamsql runs: session windows and legacy windows over
# TIMESTAMP_LTZ in batch mode.
RUNS_WHERE_FLINK_REJECTS = {
    "004_ddl_ltz_timezone_shanghai",
    "052_session_tvf_partition_by",
    "056_legacy_group_window_session",
}


@pytest.mark.parametrize("case", _cases())
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_conformance_query_plans(case: str, mode: str) -> None:
    meta = json.loads((CASES / case / "case.json").read_text())
    if meta.get("error"):
        kind = meta["error_kind"]
        if kind == "syntax":
            with pytest.raises(SqlParseError):
                _plan(case, mode)
            return
        if kind == "runtime" or mode in meta.get("accepted_modes", []):
            pq = _plan_or_skip(case, mode)
            assert pq.graph.result_node is not None
            return
        if mode not in meta.get("error_modes", []):
            pytest.skip("not an error in this mode")
        with pytest.raises(SqlError) as info:
            _plan(case, mode)
        if meta.get("position"):
            # Flink's columns on lines 2+ are 4 right of the text (see tests/conformance).
            line, col = (int(x) for x in meta["position"].split(":"))
            col = col - 4 if line > 1 else col
            assert (info.value.line, info.value.column) == (line, col), info.value.render()
        return
    rejected = meta.get("rejected", {})
    if mode in rejected and case in RUNS_WHERE_FLINK_REJECTS:
        pq = _plan(case, mode)  # streamsql goes beyond Flink here
        assert pq.graph.result_node is not None
        return
    if mode in rejected:
        with pytest.raises(SqlError) as info:
            _plan(case, mode)
        flink_msg = rejected[mode].split(": ", 1)[1]
        root = meta.get("rejected_root_cause", {}).get(mode, "")
        assert flink_msg.split(":")[0] in info.value.message or root.split(": ", 1)[-1] in info.value.message
        return
    if case in UNSUPPORTED:
        with pytest.raises(UnsupportedSqlError):
            _plan(case, mode)
        return
    pq = _plan_or_skip(case, mode)
    rows = []
    for name in ("batch.jsonl", "streaming.jsonl"):
        f = CASES / case / "expected" / name
        rows += f.read_text().splitlines() if f.exists() else []
    if rows:
        assert len(pq.schema) == len(json.loads(rows[0])["row"])
    assert JobGraph.from_json(pq.graph.to_json()).to_json() == pq.graph.to_json()
    if mode == "batch":
        assert all(n.operator != "WatermarkAssigner" for n in pq.graph.nodes)
        assert pq.changelog_mode == "I"
