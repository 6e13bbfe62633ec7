"""The Spark runner refuses, before the job starts, every function it does not map with
Flink's semantics: the collection / bitmap / string / VARIANT functions and (in BATCH, where
aggregates are Spark's own) the aggregates added for Flink 2.3's list are not in its function
table (runtime/executor/spark), so a job using one fails naming the function instead of running
with other semantics. STREAMING runs aggregates as streamsql's own operators inside Spark and
refuses only those whose value is the arrival order."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import TableEnvironment

CALLS = [
    "ARRAY_CONTAINS(arr, 1)",
    "ARRAY_SORT(arr)",
    "MAP_KEYS(MAP['a', i])",
    "BITMAP_CARDINALITY(BITMAP_BUILD(arr))",
    "PARSE_URL(s, 'HOST')",
    "URL_ENCODE(s)",
    "REGEXP_COUNT(s, 'a')",
    "PRINTF('%s', s)",
    "JSON_QUOTE(s)",
    "INET_ATON(s)",
    "TRY_PARSE_JSON(s)",
]
AGGREGATES = ["PERCENTILE(i, 0.5)", "ARRAY_AGG(i)", "BITMAP_OR_AGG(BITMAP_BUILD(arr))", "JSON_ARRAYAGG(i)"]


def _env(tmp_path: Path, mode: str = "streaming") -> TableEnvironment:
    (tmp_path / "t.json").write_text('{"i": 1, "s": "a", "arr": [1, 2]}\n')
    env = TableEnvironment.create({"execution.runtime-mode": mode})
    env.execute_sql(
        f"CREATE TABLE t (i INT, s STRING, arr ARRAY<INT>) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't.json'}', 'format' = 'json')"
    )
    return env


def _check(env: TableEnvironment, sql: str) -> None:
    from runtime.executor.spark.capabilities import check_graph

    (stmt,) = env.parse(sql)
    check_graph(env._planner().plan_query(stmt).graph)  # noqa: SLF001 - planning only, no Spark


@pytest.mark.parametrize("expr", CALLS)
def test_new_scalar_functions_are_refused_at_planning_in_batch(tmp_path: Path, expr: str) -> None:
    """BATCH maps every expression to Spark's own functions: these have no Flink-exact one.
    STREAMING runs a Calc whose functions are not all mapped as streamsql's own Calc inside
    Spark (mapInArrow; tests/spark/test_differential.py: the corpus's cases give the same
    tables), so the same query is accepted there."""
    from runtime.executor.spark.types import SparkUnsupportedError

    env = _env(tmp_path, "batch")
    _check(env, "SELECT i FROM t")  # the same job without the function runs on Spark
    with pytest.raises(SparkUnsupportedError, match="not supported by the Spark runner"):
        _check(env, f"SELECT {expr} FROM t")
    streaming = _env(tmp_path, "streaming")
    if expr.startswith("TRY_PARSE_JSON"):  # a VARIANT result: no Spark type carries it
        with pytest.raises(SparkUnsupportedError, match="type VARIANT"):
            _check(streaming, f"SELECT {expr} FROM t")
        return
    _check(streaming, f"SELECT {expr} FROM t")


def test_streaming_calc_refuses_nondeterministic_functions_and_python_udfs(tmp_path: Path) -> None:
    """streamsql's own Calc inside Spark would still evaluate RAND / NOW at other instants, and
    Spark's Python workers do not have the session's Python functions."""
    from runtime.executor.spark.types import SparkUnsupportedError
    from streamsql.udf import DataTypes, udf

    env = _env(tmp_path, "streaming")
    with pytest.raises(SparkUnsupportedError, match="function RAND is nondeterministic"):
        _check(env, "SELECT ARRAY_CONTAINS(arr, 1), RAND() FROM t")
    env.create_temporary_function("plus_one", udf(lambda x: x + 1, result_type=DataTypes.INT()))
    with pytest.raises(SparkUnsupportedError, match="a Python UDF"):
        _check(env, "SELECT plus_one(i) FROM t")


@pytest.mark.parametrize("agg", AGGREGATES)
def test_new_aggregates_are_refused_in_batch_mode(tmp_path: Path, agg: str) -> None:
    """BATCH maps aggregates to Spark's own: these have no Flink-exact counterpart."""
    from runtime.executor.spark.types import SparkUnsupportedError

    env = _env(tmp_path, "batch")
    with pytest.raises(
        SparkUnsupportedError, match="is not mapped to Spark|depends on arrival order|not supported by the Spark runner"
    ):
        _check(env, f"SELECT s, {agg} FROM t GROUP BY s")


@pytest.mark.parametrize(
    ("agg", "refusal"),
    [
        ("PERCENTILE(i, 0.5)", None),  # streamsql's GroupAggregate inside Spark (tests/spark: same result)
        ("ARRAY_AGG(i)", "ARRAY_AGG depends on arrival order"),
        ("JSON_ARRAYAGG(i)", "JSON_ARRAYAGG depends on arrival order"),
        ("JSON_OBJECTAGG(KEY s VALUE i)", "JSON_OBJECTAGG depends on arrival order"),
        ("BITMAP_OR_AGG(BITMAP_BUILD(arr))", "type BITMAP.* is not supported by the Spark runner"),
    ],
)
def test_streaming_aggregates_run_inside_spark_unless_arrival_order_decides(
    tmp_path: Path, agg: str, refusal: str | None
) -> None:
    """STREAMING runs every aggregate as streamsql's own operator inside Spark, except those
    whose value is the order rows arrive in (Spark does not define it)."""
    from runtime.executor.spark.types import SparkUnsupportedError

    env = _env(tmp_path, "streaming")
    sql = f"SELECT s, {agg} FROM t GROUP BY s"
    if refusal is None:
        _check(env, sql)
        return
    with pytest.raises(SparkUnsupportedError, match=refusal):
        _check(env, sql)


def test_streaming_limit_without_order_by_is_refused(tmp_path: Path) -> None:
    """LIMIT without ORDER BY keeps the first rows to arrive, an order Spark does not define."""
    from runtime.executor.spark.types import SparkUnsupportedError

    env = _env(tmp_path, "streaming")
    _check(env, "SELECT i FROM t ORDER BY i LIMIT 2")  # a Top-N (ties fail at run time)
    with pytest.raises(SparkUnsupportedError, match="LIMIT without ORDER BY keeps the first rows in arrival order"):
        _check(env, "SELECT i FROM t LIMIT 2")
