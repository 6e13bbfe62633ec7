"""Every conformance case the Spark runner supports gives the local runner's final table, in
both modes. Unsupported cases are skipped with the capability table's reason (computed by
`check_graph`, not listed by hand); a streaming input with rows Flink drops as late must be
refused by the Spark runner with a clear error, never answered differently; so must a tie that
the local runner breaks by arrival order (ROW_NUMBER, deduplication), which Spark does not define.

STREAMING runs streamsql's own operators inside Structured Streaming (stateful.py): about ten
seconds a case on two cores, so by default a subset covering every operator family runs in
STREAMING mode (group aggregates over updates and DISTINCT, joins of aggregates, outer
interval joins, temporal joins, window joins, window Top-N, Top-N, rowtime deduplication, OVER
with late rows, MATCH_RECOGNIZE, SESSION windows, windows that close only at the end of a
filtered input, a debezium-json source, VALUES beside a stream); STREAMSQL_SPARK_CONFORMANCE=all runs every
case the capability table accepts. Cases Flink itself rejects in a mode (case.json `rejected`) are
skipped with Flink's error; they are not counted as cases the Spark runner accepts."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest
from harness import diff, final_table, normalize
from spark_util import run_script

from runtime.errors import JobError

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None, reason="PySpark is not installed: pip install 'streamsql[spark]'"
)

STREAMING_SUBSET = {
    "037",
    "044",
    "052",
    "058",
    "064",
    "069",
    "075",
    "083",
    "086",
    "088",
    "093",
    "095",
    "105",
    "106",
    "114",
}
CASES = sorted(
    p
    for p in (Path(__file__).parents[1] / "conformance" / "cases").iterdir()
    if p.is_dir() and not p.name.startswith("9")
)


def _flink_rejects(case: Path, mode: str) -> str | None:
    """Flink's error for the case in `mode` (case.json `rejected`): nothing to run or compare."""
    return json.loads((case / "case.json").read_text()).get("rejected", {}).get(mode)


def _plan(case: Path, mode: str) -> Any:
    """The case's final query planned as the local runner would run it (None if the planner
    refuses it: then there is nothing to compare)."""
    from streamsql import TableEnvironment

    env = TableEnvironment.create({"execution.runtime-mode": mode})
    old = os.getcwd()
    os.chdir(case)
    try:
        *setup, last = env.parse((case / "case.sql").read_text())
        for stmt in setup:
            env.execute_statement(stmt).wait()
        return env._planner().plan_query(last).graph
    except Exception:  # noqa: BLE001 - the planner's refusal is the conformance suite's business
        return None
    finally:
        os.chdir(old)


# Why the capability table may refuse a case in STREAMING (the Done-when): the result
# depends on when or in which order rows arrive, which Spark does not reproduce.
STREAMING_REFUSALS = ("arrival order", "processing time", "proctime", "lookup")


def test_capability_table_accepts_every_streaming_case_but_arrival_order_and_time() -> None:
    """Every STREAMING case that Flink and the planner accept runs on Spark, unless its result
    depends on arrival order or processing time (planning only: quick). The differential test
    below runs exactly the accepted ones (STREAMSQL_SPARK_CONFORMANCE=all)."""
    from runtime.executor.spark import SparkUnsupportedError, check_graph

    accepted, refused = [], []
    for case in CASES:
        if _flink_rejects(case, "streaming"):
            continue
        graph = _plan(case, "streaming")
        if graph is None:  # the conformance suite's business (tests/conformance)
            continue
        try:
            check_graph(graph)
            accepted.append(case.name[:3])
        except SparkUnsupportedError as e:
            refused.append(case.name[:3])
            assert any(r in str(e).lower() for r in STREAMING_REFUSALS), f"{case.name}: {e}"
    assert len(accepted) > 10 * len(refused), (accepted, refused)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("case", CASES, ids=[c.name[:3] for c in CASES])
def test_same_final_table_as_local(spark: Any, case: Path, mode: str) -> None:
    from runtime.executor.spark import SparkUnsupportedError, check_graph

    if mode == "streaming" and case.name[:3] not in STREAMING_SUBSET:
        if os.environ.get("STREAMSQL_SPARK_CONFORMANCE") != "all":
            pytest.skip("STREAMING on Spark: not in the default subset (STREAMSQL_SPARK_CONFORMANCE=all runs it)")
    rejected = _flink_rejects(case, mode)
    if rejected:
        pytest.skip(f"Flink rejects this case in {mode} mode: {rejected[:120]}")
    graph = _plan(case, mode)
    if graph is None:
        pytest.skip("the planner refuses this case in this mode")
    try:
        check_graph(graph)
    except SparkUnsupportedError as e:
        pytest.skip(f"refused by the Spark runner's capability table: {e}")
    sql = (case / "case.sql").read_text()
    local = run_script(sql, mode, "local", case)
    try:
        on_spark = run_script(sql, mode, "spark", case)
    except JobError as e:
        if ("late" in str(e) or "arrival order" in str(e)) and any(r for r in local):  # a clean refusal
            pytest.skip(f"refused at run time: {str(e)[:160]}")
        raise
    problems = diff(normalize(final_table(on_spark)), normalize(final_table(local)))
    assert not problems, problems
