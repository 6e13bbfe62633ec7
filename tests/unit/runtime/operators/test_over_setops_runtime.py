"""OverAggregate (rowtime lateness, frames, retention, batch, recompute mode) and
ReplicateRows, driven directly with batches."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.batch import MAX_WATERMARK, MIN_WATERMARK, with_system_columns
from runtime.expr.ir import Literal
from runtime.graph import BATCH, STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.over import OVER_AGGREGATE, OverAggregateParams
from runtime.operators.over_frames import OverFrame
from runtime.operators.rank_common import SortKey
from runtime.operators.setops import ReplicateRowsParams
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, INT, STRING, TIMESTAMP, Field

IN = (Field("ts", TIMESTAMP(3).as_time_attr("ROWTIME")), Field("k", STRING()), Field("v", INT()))
SEC = 1000


def _node(calls, frame, mode="I", updating=False, order=None, out_types=None):
    schema = IN + tuple(Field(f"w0$o{i}", c["type"]) for i, c in enumerate(calls))
    params = OverAggregateParams(
        partition=(1,),
        order=tuple(SortKey(i, not asc, nulls_first) for i, asc, nulls_first in (order or [[0, True, True]])),
        frame=OverFrame(**frame),
        calls=tuple(
            AggCallParams(c["name"], tuple(c["args"]), c["type"], c["distinct"], c["filter"], c["params"])
            for c in calls
        ),
        time_kind=None if updating else "ROWTIME",
        updating=updating,
    )
    return Node(1, OVER_AGGREGATE.name, (0,), schema, params, changelog_mode=mode)


def _call(name, args, t, **params):
    return {"name": name, "args": args, "distinct": False, "filter": None, "type": t, "params": params}


def _batch(rows, wms=None, kinds=None):
    data = pa.record_batch(
        [
            pa.array([r[0] * SEC for r in rows], pa.timestamp("ms")),
            pa.array([r[1] for r in rows], pa.string()),
            pa.array([r[2] for r in rows], pa.int32()),
        ],
        names=["ts", "k", "v"],
    )
    return with_system_columns(
        data,
        np.asarray(kinds, dtype=np.int8) if kinds is not None else None,
        np.asarray(wms, dtype=np.int64) if wms is not None else None,
    )


def _rows(out: Output):
    res = []
    for b in out.batches:
        kinds = b.column(b.schema.get_field_index("__op")).to_pylist()
        cols = [b.column(i).to_pylist() for i in range(b.num_columns) if not b.schema.names[i].startswith("__")]
        for i, kind in enumerate(kinds):
            row = [c[i] for c in cols]
            row[0] = int(row[0].timestamp()) if row[0] is not None else None
            res.append((kind, *row))
    return res


ROWS1 = {"kind": "ROWS", "lower": -1, "upper": 0}


def test_rows_frame_streaming_with_per_key_lateness() -> None:
    """Case 105's input: bounded frames drop rows at or before the key's last fired ts."""
    op = create_operator(_node([_call("sum", [2], INT())], ROWS1), OperatorContext(mode=STREAMING, config={}))
    out = Output()
    rows = [(1, "a", 1), (5, "a", 2), (2, "a", 30), (4.5, "a", 40), (6, "b", 5), (9, "a", 3), (3, "b", 60)]
    wm = [MIN_WATERMARK, 0, 4000, 4000, 4000, 5000, 8000]
    op.process_batch(_batch(rows, wm), 0, out)
    op.on_watermark(8000, out)
    op.on_watermark(MAX_WATERMARK, out)
    got = sorted(_rows(out), key=lambda r: (r[2], r[1]))
    assert [(r[1], r[2], r[3], r[4]) for r in got] == [
        (1, "a", 1, 1),
        (2, "a", 30, 31),
        (4, "a", 40, 70),
        (5, "a", 2, 42),
        (9, "a", 3, 5),
        (6, "b", 5, 5),
    ]
    assert op.ctx.metrics.late_rows_dropped == 1


def test_unbounded_frame_drops_rows_behind_watermark_and_retains_history() -> None:
    calls = [_call("count", [], BIGINT(nullable=False)), _call("max", [2], INT())]
    op = create_operator(
        _node(calls, {"kind": "RANGE", "lower": None, "upper": 0}), OperatorContext(mode=STREAMING, config={})
    )
    out = Output()
    op.process_batch(_batch([(1, "a", 5), (2, "a", 1)], [MIN_WATERMARK, 0]), 0, out)
    op.on_watermark(2000, out)
    op.process_batch(_batch([(2, "a", 9), (3, "a", 7), (3, "a", 2)], [2000, 2000, 2000]), 0, out)
    op.on_watermark(MAX_WATERMARK, out)
    # (2, a, 9) is at the watermark: late. The two rows at 3 are RANGE peers.
    assert [r[1:] for r in _rows(out)] == [(1, "a", 5, 1, 5), (2, "a", 1, 2, 5), (3, "a", 7, 4, 7), (3, "a", 2, 4, 7)]
    assert op.ctx.metrics.late_rows_dropped == 1


def test_history_is_pruned_to_the_frame() -> None:
    op = create_operator(_node([_call("sum", [2], INT())], ROWS1), OperatorContext(mode=STREAMING, config={}))
    out = Output()
    for t in range(1, 6):
        op.process_batch(_batch([(t, "a", t), (t, "b", 10 * t)], [(t - 1) * SEC, (t - 1) * SEC]), 0, out)
        op.on_watermark(t * SEC, out)
    assert op.history.num_rows == 2  # type: ignore[attr-defined]  # one row per key is all ROWS 1 PRECEDING needs
    assert [r[4] for r in _rows(out) if r[2] == "b"] == [10, 30, 50, 70, 90]


def test_batch_lag_default_and_avg_truncation() -> None:
    calls = [
        _call("lag", [2], INT(), offset=2, default=Literal(-1, INT(nullable=False))),
        _call("avg", [2], INT()),
        _call("row_number", [], BIGINT(nullable=False)),
    ]
    node = _node(calls, {"kind": "ROWS", "lower": None, "upper": 0})
    op = create_operator(node, OperatorContext(mode=BATCH, config={}))
    out = Output()
    op.process_batch(_batch([(3, "a", 4), (1, "a", 1), (2, "a", None), (1, "b", -3), (2, "b", -4)]), 0, out)
    op.end_input(0, out)
    got = sorted(_rows(out), key=lambda r: (r[2], r[1]))
    assert [r[4:] for r in got] == [
        (-1, 1, 1),
        (-1, 1, 2),
        (1, 2, 3),  # AVG(1, NULL, 4) = 5 / 2 -> 2 (integer division)
        (-1, -3, 1),
        (-1, -3, 2),  # AVG(-3, -4) = -3 (truncated toward zero)
    ]


def test_recompute_mode_emits_retract_diff() -> None:
    """Beyond Flink: an updating input; the final table equals the batch result."""
    node = _node([_call("sum", [2], INT())], {"kind": "ROWS", "lower": None, "upper": 0}, "I,UB,UA,D", True)
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    out = Output()
    op.process_batch(_batch([(1, "a", 1), (2, "a", 2), (3, "a", 3)]), 0, out)
    op.process_batch(_batch([(1, "a", 1), (1, "a", 10)], kinds=[1, 2]), 0, out)
    table: dict[tuple, int] = {}
    for kind, *row in _rows(out):
        key = tuple(row)
        table[key] = table.get(key, 0) + (1 if kind in (0, 2) else -1)
    final = sorted(k for k, c in table.items() for _ in range(c))
    assert final == [(1, "a", 10, 10), (2, "a", 2, 12), (3, "a", 3, 15)]
    assert all(c >= 0 for c in table.values())


def test_replicate_rows_repeats_with_row_kind() -> None:
    node = Node(3, "ReplicateRows", (2,), (Field("s", STRING()),), ReplicateRowsParams(0, (1,)))
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    data = pa.record_batch([pa.array([2, 0, 3], pa.int64()), pa.array(["x", "y", "z"])], names=["c", "s"])
    out = Output()
    op.process_batch(with_system_columns(data, np.array([0, 0, 1], dtype=np.int8)), 0, out)
    b = out.batches[0]
    assert b.column(0).to_pylist() == ["x", "x", "z", "z", "z"]
    assert b.column(1).to_pylist() == [0, 0, 1, 1, 1]
