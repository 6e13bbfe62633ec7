"""The Spark runner refuses, before the job starts, an event-time operator over the rowtime
of a UNION ALL: the union's watermark is the minimum of its inputs' as their rows
interleave, which Spark does not reproduce. A union whose rowtime nothing event-time reads
still runs (a projection, a GROUP BY of other columns: the check passes)."""

from __future__ import annotations

import pytest

from streamsql import EnvironmentSettings, TableEnvironment


def _graph(sql: str):
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for name in ("a", "b"):
        env.execute_sql(
            f"CREATE TABLE {name} (k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
            f"WITH ('connector' = 'filesystem', 'path' = '/nonexistent/{name}.csv', 'format' = 'csv')"
        )
    (stmt,) = env.parse(sql)
    return env._planner().plan_query(stmt).graph  # noqa: SLF001 - planning only, no Spark


def test_window_over_a_union_is_refused_with_the_reason() -> None:
    from runtime.executor.spark.capabilities import check_graph
    from runtime.executor.spark.types import SparkUnsupportedError

    graph = _graph(
        "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE (SELECT * FROM a UNION ALL SELECT * FROM b), "
        "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end"
    )
    with pytest.raises(SparkUnsupportedError, match=r"reads the rowtime of a UNION ALL \(node \d+\)"):
        check_graph(graph)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT k, ts FROM a UNION ALL SELECT k, ts FROM b",
        "SELECT k, COUNT(*) FROM (SELECT * FROM a UNION ALL SELECT * FROM b) GROUP BY k",
    ],
)
def test_union_whose_rowtime_no_stateful_operator_reads_passes(sql: str) -> None:
    from runtime.executor.spark.capabilities import check_graph

    check_graph(_graph(sql))
