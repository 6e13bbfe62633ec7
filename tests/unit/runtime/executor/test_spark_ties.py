"""Ties the local runner breaks by arrival order, inside Spark (runtime/executor/spark/ties.py):
rowtime deduplication, window Top-N / deduplication and rowtime OVER with a ROWS frame. Rows
reach a Spark processor in another order than the local runner's, so a tie among rows that
differ, where it decides the result, fails the job; ties among equal rows, and ties the
operator resolves by peers (RANGE frames), do not. Spark-free: the checks run on the
runtime operators the processor hosts (tests/spark/test_differential.py holds Spark's tables
equal to the local runner's on the corpus, and tests/spark/test_relational_and_functions.py
on ties among equal rows)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND
from runtime.executor.spark.stateful import _operator
from runtime.executor.spark.ties import batch_tie, fire_tie
from runtime.operators.base import Output
from streamsql import TableEnvironment

T0 = dt.datetime(2024, 1, 1, 0, 0, 0)
T1 = dt.datetime(2024, 1, 1, 0, 0, 0, 500000)
FAR = 10**15


def _op(sql: str, kind: str) -> Any:
    env = TableEnvironment.create({"execution.runtime-mode": "streaming"})
    env.execute_sql(
        "CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
        "WITH ('connector' = 'datagen', 'number-of-rows' = '1')"
    )
    graph = env._planner().plan_query(env.parse(sql)[0]).graph  # noqa: SLF001 - planning only
    node = next(n for n in graph.nodes if n.operator == kind)
    modes = [graph.node(i).changelog_mode for i in node.inputs]
    op = _operator(node, dict(graph.config or {}), modes)
    op.in_fields = graph.node(node.inputs[0]).schema
    return op


def _batch(op: Any, rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    fields = op.in_fields
    if len(fields) > 3:  # a window TVF's output: + window_start, window_end, window_time (1 s windows)
        start = [r[2].replace(microsecond=0) for r in rows]
        ends = [s + dt.timedelta(seconds=1) for s in start]
        rows = [(*r, s, e, e - dt.timedelta(milliseconds=1)) for r, s, e in zip(rows, start, ends, strict=True)]
    cols = [pa.array([r[i] for r in rows], f.type.to_arrow()) for i, f in enumerate(fields)]
    cols.append(pa.array([0] * len(rows), pa.int8()))
    return pa.RecordBatch.from_arrays(cols, names=[*(f.name for f in fields), ROW_KIND])


DEDUP = "SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts {d}) AS rn FROM t) WHERE rn = 1"


@pytest.mark.parametrize("direction", ["ASC", "DESC"])
def test_rowtime_deduplication_refuses_a_tie_among_different_rows_at_the_kept_rowtime(direction: str) -> None:
    op = _op(DEDUP.format(d=direction), "Deduplicate")
    assert batch_tie(op, _batch(op, [(1, 10, T0), (1, 10, T0), (2, 5, T0)])) is None  # equal rows
    kept, other = (T0, T1) if direction == "ASC" else (T1, T0)
    assert batch_tie(op, _batch(op, [(1, 10, kept), (1, 20, other)])) is None  # no tie at the kept time
    assert "arrival order" in str(batch_tie(op, _batch(op, [(1, 10, kept), (1, 20, kept)])))
    op.process_batch(_batch(op, [(1, 10, kept)]), 0, Output())  # the kept row, then a tie with it
    assert "arrival order" in str(batch_tie(op, _batch(op, [(1, 20, kept)])))
    assert batch_tie(op, _batch(op, [(1, 10, kept), (2, 20, kept)])) is None


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        (
            "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY v DESC) "
            "AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))) WHERE rn <= 1",
            "WindowRank",
        ),
        (
            "SELECT k, v, window_start FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k "
            "ORDER BY ts) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND))) WHERE rn <= 1",
            "WindowDeduplicate",
        ),
    ],
)
def test_window_top_n_refuses_a_tie_among_different_rows_across_the_kept_range(sql: str, kind: str) -> None:
    op = _op(sql, kind)
    op.process_batch(_batch(op, [(1, 10, T0), (1, 10, T0), (1, 5, T1), (2, 5, T1)]), 0, Output())
    assert fire_tie(op, FAR) is None  # the tie is among equal rows
    op.process_batch(_batch(op, [(1, 10, T0)]), 0, Output())
    op.process_batch(
        _batch(op, [(3, 7, T0), (3, 7, T1)] if kind == "WindowRank" else [(3, 7, T0), (3, 8, T0)]), 0, Output()
    )
    assert "arrival order" in str(fire_tie(op, FAR))
    assert fire_tie(op, 0) is None  # those windows do not fire yet


@pytest.mark.parametrize(("frame", "refused"), [("ROWS", True), ("RANGE", False)])
def test_rowtime_over_refuses_equal_timestamps_of_different_rows_in_a_rows_frame(frame: str, refused: bool) -> None:
    sql = f"SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts {frame} BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t"
    op = _op(sql, "OverAggregate")
    op.process_batch(_batch(op, [(1, 10, T0), (1, 10, T0), (2, 5, T0), (2, 6, T1)]), 0, Output())
    assert fire_tie(op, FAR) is None  # equal rows, or different timestamps
    op.process_batch(_batch(op, [(3, 1, T0), (3, 2, T0)]), 0, Output())
    assert ("arrival order" in str(fire_tie(op, FAR))) is refused
    assert fire_tie(op, 0) is None


def test_over_in_recompute_mode_refuses_equal_order_values_of_different_rows() -> None:
    """An ORDER BY that is no time attribute (recompute mode, over_updating.py) numbers rows with
    equal values by arrival: a ROWS frame over such a tie among different rows is refused, in a
    batch and against the live rows; different values, or a RANGE frame (peers), are not."""
    sql = "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY v {f} BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"
    op = _op(sql.format(f="ROWS"), "OverAggregate")
    assert op.updating is not None  # recompute mode
    assert batch_tie(op, _batch(op, [(1, 10, T0), (1, 20, T0), (2, 10, T0)])) is None
    assert "arrival order" in str(batch_tie(op, _batch(op, [(1, 10, T0), (1, 10, T1)])))
    op.process_batch(_batch(op, [(1, 10, T0)]), 0, Output())
    assert "arrival order" in str(batch_tie(op, _batch(op, [(1, 10, T1)])))  # ties with a live row
    assert batch_tie(op, _batch(op, [(2, 10, T1), (1, 10, T0)])) is None  # another partition; an equal row
    peers = _op(sql.format(f="RANGE"), "OverAggregate")
    assert batch_tie(peers, _batch(peers, [(1, 10, T0), (1, 10, T1)])) is None
