"""Calc, Values, Union, Exchange, WatermarkAssigner, WindowTableFunction, Sink."""

from __future__ import annotations

from types import ModuleType

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import MIN_WATERMARK, ROW_WATERMARK, with_system_columns
from runtime.expr.ir import Call, Literal
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.types import BIGINT, BOOLEAN, INT, STRING, Field


def _op(node: Node, mode: str = STREAMING, config: dict[str, str] | None = None):
    op = create_operator(node, OperatorContext(mode=mode, config=config or {}))
    op.open()
    return op


def test_calc_filters_null_condition_and_keeps_system_columns(kit: ModuleType) -> None:
    fields = [Field("v", INT())]
    cond = Call("greater_than", (kit.ref(0, INT()), Literal(1, INT(False))), BOOLEAN())
    node = kit.node(2, "Calc", (1,), [Field("w", INT())], projections=[kit.ref(0, INT())], condition=cond)
    data = pa.RecordBatch.from_arrays([pa.array([1, None, 2, 3], pa.int32())], names=["v"])
    batch = with_system_columns(data, np.array([0, 0, 2, 3], dtype=np.int8), np.array([5, 6, 7, 8]))
    out = Output()
    _op(node).process_batch(batch, 0, out)
    (b,) = out.batches
    assert b.schema.names == ["w", "__op", "__wm"]
    assert b.column(0).to_pylist() == [2, 3]
    assert b.column(1).to_pylist() == [2, 3]
    assert b.column(2).to_pylist() == [7, 8]
    del fields


def _assigner(kit: ModuleType) -> Node:
    return kit.node(
        2,
        "WatermarkAssigner",
        (1,),
        [Field("t", BIGINT())],
        rowtime_index=0,
        watermark=kit.ref(0, BIGINT()),
        idle_timeout_ms=None,
    )


def test_watermark_assigner_per_row_watermarks(kit: ModuleType) -> None:
    op = _op(_assigner(kit), config={"pipeline.auto-watermark-interval": "0"})
    out = Output()
    op.process_batch(pa.RecordBatch.from_arrays([pa.array([10, None, 5, 20])], names=["t"]), 0, out)
    (b,) = out.batches
    assert b.column(1).to_pylist() == [MIN_WATERMARK, 10, 10, 10]
    assert out.watermarks == [20]
    out = Output()
    op.process_batch(pa.RecordBatch.from_arrays([pa.array([3])], names=["t"]), 0, out)
    assert out.batches[0].column(ROW_WATERMARK).to_pylist() == [20]
    assert out.watermarks == []  # did not advance


def test_watermark_assigner_interval_emits_eagerly_past_the_interval(kit: ModuleType) -> None:
    """Flink's default 200 ms: a watermark is emitted after a row when it exceeds the last
    emitted one by more than 200; the rows after it see only emitted watermarks."""
    op = _op(_assigner(kit))
    out = Output()
    op.process_batch(pa.RecordBatch.from_arrays([pa.array([1000, 1100, 1200, 1201, 1300, 1500])], names=["t"]), 0, out)
    (b,) = out.batches
    # emitted after 1000 (the first), 1201 (> 1000 + 200) and 1500 (> 1201 + 200)
    assert b.column(1).to_pylist() == [MIN_WATERMARK, 1000, 1000, 1000, 1201, 1201]
    assert out.watermarks == [1500]
    out = Output()
    op.process_batch(pa.RecordBatch.from_arrays([pa.array([1600, 1650])], names=["t"]), 0, out)
    assert out.batches[0].column(ROW_WATERMARK).to_pylist() == [1500, 1500]
    assert out.watermarks == []  # 1650 - 1500 is within the interval: held back
    out = Output()
    op.last_periodic -= 1.0  # as if a second of wall clock had passed since the last periodic emission
    op.on_timer(out)  # the inputs are idle: the periodic emission releases it
    assert out.watermarks == [1650]


def test_059_window_tvf_keeps_late_rows(kit: ModuleType) -> None:
    case = "059_window_tvf_plain_projection"
    nodes = kit.events_with_watermark(case, 3000, 2)
    ts = kit.ts3()
    nodes.append(
        kit.node(
            3,
            "WindowTableFunction",
            (2,),
            list(kit.EVENTS)
            + [Field("window_start", kit.ts3(False)), Field("window_end", kit.ts3(False)), Field("window_time", ts)],
            window=kit.window("TUMBLE", size_ms=10_000),
            time_index=0,
        )
    )
    cond = Call("less_than", (kit.ref(2, INT()), Literal(12, INT(False))), BOOLEAN())
    order = [1, 2, 0, 3, 4, 5]
    nodes.append(
        kit.node(
            4,
            "Calc",
            (3,),
            [nodes[-1].schema[i] for i in order],
            projections=[kit.ref(i, nodes[-1].schema[i].type) for i in order],
            condition=cond,
        )
    )
    for mode, file in (("STREAMING", "streaming.changelog.jsonl"), ("BATCH", "batch.jsonl")):
        rows, _ = kit.run(nodes, 4, mode)
        want = kit.expected(case, file)
        if mode == "STREAMING":
            assert rows == want
        else:
            assert kit.as_rows(rows) == kit.as_rows(want)


def test_hop_and_cumulate_tvf_replicate_rows(kit: ModuleType, tmp_path) -> None:
    p = tmp_path / "e.csv"
    p.write_text("2024-01-01 00:00:07.000,a,1\n")
    props = [
        Field("window_start", kit.ts3(False)),
        Field("window_end", kit.ts3(False)),
        Field("window_time", kit.ts3()),
    ]
    for spec, want in (
        (kit.window("HOP", size_ms=10_000, slide_ms=5_000), [("00:00:05", "00:00:15"), ("00:00:00", "00:00:10")]),
        (kit.window("CUMULATE", size_ms=10_000, step_ms=5_000), [("00:00:00", "00:00:10")]),
    ):
        nodes = [
            kit.scan(1, p, kit.EVENTS),
            kit.node(2, "WindowTableFunction", (1,), list(kit.EVENTS) + props, window=spec, time_index=0),
        ]
        rows, _ = kit.run(nodes, 2)
        got = sorted((r["row"][3][11:19], r["row"][4][11:19]) for r in rows)
        assert got == sorted(want)


def test_union_exchange_and_values(kit: ModuleType) -> None:
    f = [Field("x", INT(False))]
    v1 = kit.node(1, "Values", (), f, rows=[[Literal(1, INT(False))], [Literal(2, INT(False))]])
    v2 = kit.node(2, "Values", (), f, rows=[[Literal(3, INT(False))]])
    u = kit.node(3, "Union", (1, 2), f)
    e = kit.node(4, "Exchange", (3,), f, distribution="single", keys=[])
    rows, ex = kit.run([v1, v2, u, e], 4)
    assert sorted(r["row"][0] for r in rows) == ["1", "2", "3"]
    assert ex.metrics[3].rows_in == 3 and ex.metrics[4].rows_out == 3


def test_sink_writes_and_closes(kit: ModuleType) -> None:
    f = [Field("x", INT(False)), Field("s", STRING())]
    vals = kit.node(1, "Values", (), f, rows=[[Literal(1, INT(False)), Literal("a", STRING())]])
    sink = kit.node(
        2, "Sink", (1,), [], table="out", connector="testfile", options={"path": "-", "name": "s1"}, schema=f
    )
    kit.COLLECTED.clear()
    rows, ex = kit.run([vals, sink], None)
    assert rows == []
    (b,) = kit.COLLECTED["s1"]
    assert b.schema.names == ["x", "s"] and b.to_pylist() == [{"x": 1, "s": "a"}]
    assert "s1.closed" in kit.COLLECTED


@pytest.mark.parametrize("bad", [True])
def test_calc_errors_propagate(kit: ModuleType, bad: bool) -> None:
    from runtime.errors import JobError

    f = [Field("x", INT(False))]
    vals = kit.node(1, "Values", (), f, rows=[[Literal(1, INT(False))]])
    div = Call("divide", (kit.ref(0, INT(False)), Literal(0, INT(False))), INT())
    calc = kit.node(2, "Calc", (1,), [Field("y", INT())], projections=[div], condition=None)
    with pytest.raises(JobError):
        kit.run([vals, calc], 2)
