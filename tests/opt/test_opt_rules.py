"""Issue 5 optimizer rules: mini-batch and two-phase aggregation keep the final table of
Flink-oracle conformance queries unchanged; per-operator stats are exposed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from harness import final_table, normalize, run_script  # noqa: E402

from planner.errors import SqlValidationError  # noqa: E402
from streamsql.environment import EnvironmentSettings, TableEnvironment  # noqa: E402

CASES = Path(__file__).resolve().parents[1] / "conformance" / "cases"
SMALL = "SET 'table.exec.source.batch-rows' = '2';\n"
MINI = (
    "SET 'table.exec.mini-batch.enabled' = 'true';\n"
    "SET 'table.exec.mini-batch.allow-latency' = '5 s';\n"
    "SET 'table.exec.mini-batch.size' = '100000';\n"
)
QUERIES = [
    "032_groupby_many_aggregates",
    "037_count_sum_distinct",
    "038_aggregate_filter_clause",
    "040_global_aggregate_empty_input",
    "044_groupby_retraction_changelog",
    "046_count_of_distinct_subquery",
    "047_group_by_expressions",
    "088_changelog_source_debezium_aggregate",
]


def _run(case: str, prefix: str) -> list[dict]:
    d = CASES / case
    return run_script(prefix + (d / "case.sql").read_text(), d, "streaming")


@pytest.mark.parametrize("strategy", ["ONE_PHASE", "TWO_PHASE"])
@pytest.mark.parametrize("case", QUERIES)
def test_mini_batch_keeps_final_table(case: str, strategy: str) -> None:
    base = _run(case, SMALL)
    rows = _run(case, SMALL + MINI + f"SET 'table.optimizer.agg-phase-strategy' = '{strategy}';\n")
    assert normalize(final_table(rows)) == normalize(final_table(base))
    assert len(rows) <= len(base)


def test_mini_batch_reduces_churn() -> None:
    base = _run("044_groupby_retraction_changelog", SMALL)
    rows = _run("044_groupby_retraction_changelog", SMALL + MINI)
    assert len(rows) < len(base)


def _env(**conf: str) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode()
    env = TableEnvironment.create(settings)
    for k, v in conf.items():
        env.get_config().set(k, v)
    env.execute_sql("CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen', 'number-of-rows' = '50')")
    return env


def _plan(env: TableEnvironment) -> str:
    return "\n".join(str(r[0]) for r in env.execute_sql("EXPLAIN SELECT k, SUM(v) FROM t GROUP BY k").collect())


def test_switches() -> None:
    off = _plan(_env())
    assert "MiniBatchAssigner" not in off and "LocalGroupAggregate" not in off
    mini = {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "1 s",
        "table.exec.mini-batch.size": "10",
    }
    two = _plan(_env(**mini))
    assert "MiniBatchAssigner(interval=[1000ms], mode=[ProcTime])" in two
    assert "LocalGroupAggregate" in two and "GlobalGroupAggregate" in two
    one = _plan(_env(**mini, **{"table.optimizer.agg-phase-strategy": "ONE_PHASE"}))
    assert "MiniBatchAssigner" in one and "LocalGroupAggregate" not in one
    with pytest.raises(SqlValidationError):
        _plan(_env(**{"table.exec.mini-batch.enabled": "true"}))


def test_metrics_and_cli_stats(tmp_path: Path) -> None:
    env = _env()
    result = env.execute_sql("SELECT k, COUNT(*) FROM t GROUP BY k")
    list(result.batches())
    stats = {r["operator"]: r for r in result.metrics()}
    assert stats["TableSourceScan"]["rows_out"] == 50
    assert stats["GroupAggregate"]["rows_in"] == 50
    assert stats["GroupAggregate"]["busy_ms"] > 0

    import io

    from streamsql.cli import Runner, build_parser

    args = build_parser().parse_args(["--stats"])
    out, err = io.StringIO(), io.StringIO()
    runner = Runner(args, out, err)
    code = runner.run_script(
        "CREATE TABLE t (k STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '7');SELECT k FROM t;",
        "test",
    )
    assert code == 0
    assert "Operator statistics" in err.getvalue() and "TableSourceScan" in err.getvalue()


SPLIT = (
    "SET 'table.optimizer.distinct-agg.split.enabled' = 'true';\n"
    "SET 'table.optimizer.distinct-agg.split.bucket-num' = '4';\n"
)


@pytest.mark.parametrize("extra", ["", MINI], ids=["split", "split+mini-batch+two-phase"])
@pytest.mark.parametrize(
    "case", ["037_count_sum_distinct", "038_aggregate_filter_clause", "061_window_distinct_filter_aggs"]
)
def test_split_distinct_keeps_final_table(case: str, extra: str) -> None:
    base = _run(case, SMALL)
    rows = _run(case, SMALL + SPLIT + extra)
    assert normalize(final_table(rows)) == normalize(final_table(base))


NEXMARK = Path(__file__).resolve().parents[1] / "nexmark"
BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "nexmark"


@pytest.mark.parametrize("name", ["q15", "q16"])
def test_nexmark_split_distinct_matches_flink(name: str) -> None:
    import gzip
    import json
    from collections import Counter

    script = SPLIT + MINI + (BENCH / "prefix.sql").read_text() + "\n;\n" + (BENCH / f"{name}.sql").read_text()
    actual = final_table(run_script(script, NEXMARK, "streaming"))
    with gzip.open(NEXMARK / "expected" / f"{name}.streaming.jsonl.gz", "rt") as fh:
        want = Counter(tuple(json.loads(line)["row"]) for line in fh if line.strip())
    assert actual == want


def test_split_distinct_plan() -> None:
    env = _env(
        **{"table.optimizer.distinct-agg.split.enabled": "true", "table.optimizer.distinct-agg.split.bucket-num": "8"}
    )
    rows = env.execute_sql("EXPLAIN SELECT k, COUNT(DISTINCT v), SUM(DISTINCT v) FROM t GROUP BY k").collect()
    plan = "\n".join(str(r[0]) for r in rows)
    assert "MOD(HASH_CODE(v), 8)" in plan
    assert "$SUM0(" in plan and plan.count("GroupAggregate(") >= 4  # two aggregates, in two sections


def test_mini_batch_assigner_buffers_until_size_or_watermark() -> None:
    import pyarrow as pa

    from runtime.graph import Node
    from runtime.operators.base import OperatorContext, Output
    from runtime.operators.mini_batch import MiniBatchAssignerOperator, MiniBatchAssignerParams
    from runtime.types import BIGINT, Field

    node = Node(
        id=0,
        operator="MiniBatchAssigner",
        inputs=(),
        schema=(Field("x", BIGINT()),),
        params=MiniBatchAssignerParams(60_000, 5, "ProcTime"),
    )
    op = MiniBatchAssignerOperator(node, OperatorContext(mode="STREAMING", config={}))
    out = Output()
    batch = pa.record_batch([pa.array([1, 2], pa.int64())], names=["x"])
    op.process_batch(batch, 0, out)
    op.process_batch(batch, 0, out)
    assert out.drain() == ([], [])  # 4 rows < size: buffered
    op.process_batch(batch, 0, out)
    batches, _ = out.drain()
    assert [b.num_rows for b in batches] == [6]
    op.process_batch(batch, 0, out)
    op.on_watermark(10, out)
    batches, wms = out.drain()
    assert [b.num_rows for b in batches] == [2] and wms == [10]
