"""Rank / SortLimit / Deduplicate / WindowRank / Sort / Limit / TemporalSort operators,
driven batch by batch (no planner)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds, with_system_columns
from runtime.graph import BATCH, STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.rank_common import SortKey, rank_numbers, sort_order
from runtime.operators.spec import spec_for
from runtime.types import BIGINT, INT, STRING, TIMESTAMP, Field

KV = [Field("k", STRING()), Field("v", INT())]
RANKED = KV + [Field("rn", BIGINT(nullable=False))]


def make(op: str, schema: list[Field], mode: str = STREAMING, input_modes: list[str] | None = None, **params: Any):
    """Operator `op` with its typed params from the JSON-shaped `params`."""
    spec = spec_for(op)
    assert spec is not None
    node = Node(0, op, (1,), tuple(schema), spec.decode_params(params))
    o = create_operator(node, OperatorContext(mode=mode, config={}))
    if input_modes is not None:
        o.input_changelog_modes = input_modes  # type: ignore[attr-defined]
    return o


def batch(rows: list[tuple], names: tuple[str, ...] = ("k", "v"), ops: list[int] | None = None, wm=None):
    cols: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in names]
    data = pa.RecordBatch.from_arrays([pa.array(list(c)) for c in cols], names=list(names))
    kinds = None if ops is None else np.array(ops, dtype=np.int8)
    wms = None if wm is None else np.array(wm, dtype=np.int64)
    return with_system_columns(data, kinds, wms)


def changes(out: Output) -> list[tuple[str, tuple]]:
    res = []
    for b in out.drain()[0]:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        res += [(ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return res


def fold(cl: list[tuple[str, tuple]]) -> Counter:
    t: Counter = Counter()
    for op, row in cl:
        if op in ("+I", "+U"):
            t[row] += 1
        else:
            assert t[row] > 0, f"retracts {row} that was not emitted"
            t[row] -= 1
    return +t


ORDER_V_DESC = [{"index": 1, "descending": True, "nulls_first": False}]


def test_sort_order_per_key_null_placement_and_stability() -> None:
    a = pa.array([3, None, 1, 3, None])
    b = pa.array(["x", "y", "z", "w", "v"])
    asc_nf = sort_order([a, b], [SortKey(0, False, True)])
    assert asc_nf.tolist() == [1, 4, 2, 0, 3]  # NULLs first, ties keep arrival order
    desc_nl = sort_order([a, b], [SortKey(0, True, False)])
    assert desc_nl.tolist() == [0, 3, 2, 1, 4]


@pytest.mark.parametrize(
    ("rank_type", "expected"),
    [("ROW_NUMBER", [1, 2, 3, 4, 1]), ("RANK", [1, 1, 3, 4, 1]), ("DENSE_RANK", [1, 1, 2, 3, 1])],
)
def test_rank_numbers(rank_type: str, expected: list[int]) -> None:
    v = pa.array([9, 9, 5, None, 7])
    part = np.array([0, 0, 0, 0, 1])
    idx, ranks = rank_numbers([v], [SortKey(0, True, False)], rank_type, part)
    assert idx.tolist() == [0, 1, 2, 3, 4] and ranks.tolist() == expected


def test_topn_with_rank_number_updates_by_position() -> None:
    op = make("Rank", RANKED, input_modes=["I"], partition_keys=[0], order=ORDER_V_DESC, rank_type="ROW_NUMBER",
              rank_start=1, rank_end=2, output_rank=True)  # fmt: skip
    out = Output()
    op.process_batch(batch([("a", 5)]), 0, out)
    assert changes(out) == [("+I", ("a", 5, 1))]
    op.process_batch(batch([("a", 9)]), 0, out)
    assert changes(out) == [("-U", ("a", 5, 1)), ("+U", ("a", 9, 1)), ("+I", ("a", 5, 2))]
    op.process_batch(batch([("a", 7), ("b", 1)]), 0, out)
    assert changes(out) == [("-U", ("a", 5, 2)), ("+U", ("a", 7, 2)), ("+I", ("b", 1, 1))]
    # AppendFast keeps only the rows that can still be in the top 2
    assert op.rows.num_rows == 3


def test_topn_without_rank_number_inserts_then_deletes() -> None:
    op = make("Rank", KV, input_modes=["I"], partition_keys=[0], order=ORDER_V_DESC, rank_type="ROW_NUMBER",
              rank_start=1, rank_end=2, output_rank=False)  # fmt: skip
    out = Output()
    op.process_batch(batch([("a", 5), ("a", 6)]), 0, out)
    assert fold(changes(out)) == Counter({("a", 5): 1, ("a", 6): 1})
    op.process_batch(batch([("a", 9)]), 0, out)
    assert changes(out) == [("+I", ("a", 9)), ("-D", ("a", 5))]


def test_top1_pairs_as_update() -> None:
    op = make("Rank", KV, input_modes=["I"], partition_keys=[0], order=ORDER_V_DESC, rank_type="ROW_NUMBER",
              rank_start=1, rank_end=1, output_rank=False)  # fmt: skip
    out = Output()
    op.process_batch(batch([("a", 5)]), 0, out)
    op.process_batch(batch([("a", 8), ("a", 2)]), 0, out)
    assert changes(out) == [("+I", ("a", 5)), ("-U", ("a", 5)), ("+U", ("a", 8))]


def test_topn_over_retractions_refills_from_kept_rows() -> None:
    op = make("Rank", KV, input_modes=["I,UB,UA,D"], partition_keys=[0], order=ORDER_V_DESC,
              rank_type="ROW_NUMBER", rank_start=1, rank_end=2, output_rank=False)  # fmt: skip
    out = Output()
    cl: list = []
    op.process_batch(batch([("a", 5), ("a", 6), ("a", 7), ("a", 7)]), 0, out)
    cl += changes(out)
    assert fold(cl) == Counter({("a", 7): 2})
    # retract one of the two equal rows and the 6 (not in the top 2: nothing to retract)
    op.process_batch(batch([("a", 7), ("a", 6)], ops=[1, 3]), 0, out)
    cl += changes(out)
    assert fold(cl) == Counter({("a", 7): 1, ("a", 5): 1})
    # retracting a row never added is ignored
    op.process_batch(batch([("a", 100)], ops=[3]), 0, out)
    cl += changes(out)
    assert fold(cl) == Counter({("a", 7): 1, ("a", 5): 1})


def test_rank_batch_mode_and_offset_sort_limit() -> None:
    op = make("SortLimit", KV, mode=BATCH, order=ORDER_V_DESC, offset=1, fetch=2)
    out = Output()
    op.process_batch(batch([("a", 1), ("b", None), ("c", 3), ("d", 2)]), 0, out)
    op.end_input(0, out)
    assert changes(out) == [("+I", ("d", 2)), ("+I", ("a", 1))]


def test_sort_and_limit() -> None:
    s = make("Sort", KV, mode=BATCH, order=[{"index": 1, "descending": False, "nulls_first": False}])
    out = Output()
    s.process_batch(batch([("a", 2), ("b", None)]), 0, out)
    s.process_batch(batch([("c", 1), ("d", 2)]), 0, out)
    s.end_input(0, out)
    assert [r for _, r in changes(out)] == [("c", 1), ("a", 2), ("d", 2), ("b", None)]
    lim = make("Limit", KV, offset=1, fetch=2)
    lim.process_batch(batch([("a", 1)]), 0, out)
    lim.process_batch(batch([("b", 2), ("c", 3), ("d", 4)]), 0, out)
    lim.process_batch(batch([("e", 5)]), 0, out)
    assert [r for _, r in changes(out)] == [("b", 2), ("c", 3)]


TS = [Field("ts", TIMESTAMP(3)), Field("k", STRING())]


def _ts_batch(rows: list[tuple[int, str]], wm: list[int]):
    data = pa.RecordBatch.from_arrays(
        [pa.array([r[0] for r in rows], pa.timestamp("ms")), pa.array([r[1] for r in rows])], names=["ts", "k"]
    )
    return with_system_columns(data, None, np.array(wm, dtype=np.int64))


def test_dedup_keep_first_rowtime_waits_for_watermark_and_drops_late_rows() -> None:
    op = make("Deduplicate", TS, partition_keys=[1], order=[{"index": 0, "descending": False}], keep_last=False,
              rank_type="ROW_NUMBER", rank_start=1, rank_end=1, output_rank=False,
              time_kind="ROWTIME")  # fmt: skip
    out = Output()
    op.process_batch(_ts_batch([(5000, "u1"), (3000, "u1"), (4000, "u2")], [-(2**63), 3000, 3000]), 0, out)
    assert changes(out) == []
    op.on_watermark(3500, out)
    got = changes(out)
    assert [r for _, r in got][0][1] == "u1"
    op.process_batch(_ts_batch([(1000, "u1"), (1000, "u3")], [3500, 3500]), 0, out)
    op.end_input(0, out)
    ks = [r[1] for _, r in changes(out)]
    assert ks == ["u2"]  # u1 already emitted, u3 late
    assert op.ctx.metrics.late_rows_dropped == 1


def test_dedup_keep_last_rowtime_updates_only_for_newer_rows() -> None:
    op = make("Deduplicate", TS, partition_keys=[1], order=[{"index": 0, "descending": True}], keep_last=True,
              rank_type="ROW_NUMBER", rank_start=1, rank_end=1, output_rank=False,
              time_kind="ROWTIME")  # fmt: skip
    out = Output()
    op.process_batch(_ts_batch([(5000, "u1")], [0]), 0, out)
    op.process_batch(_ts_batch([(3000, "u1"), (9000, "u1"), (9000, "u2")], [0, 0, 0]), 0, out)
    cl = changes(out)
    assert [op_ for op_, _ in cl] == ["+I", "-U", "+U", "+I"]
    assert fold(cl) == Counter({(pa.scalar(9000, pa.timestamp("ms")).as_py(), "u1"): 1,
                                (pa.scalar(9000, pa.timestamp("ms")).as_py(), "u2"): 1})  # fmt: skip


def test_window_rank_fires_with_the_watermark() -> None:
    schema = [Field("k", STRING()), Field("v", INT()), Field("window_end", TIMESTAMP(3))]
    op = make("WindowRank", schema, partition_keys=[2], order=[{"index": 1, "descending": True, "nulls_first": False}],
              rank_type="ROW_NUMBER", rank_start=1, rank_end=1, output_rank=False, window_end_index=2,
              window={"kind": "TUMBLE", "size_ms": 10000}, window_start_index=2)  # fmt: skip
    data = pa.RecordBatch.from_arrays(
        [pa.array(["a", "b", "c"]), pa.array([1, 3, 2]), pa.array([10000, 10000, 20000], pa.timestamp("ms"))],
        names=["k", "v", "window_end"],
    )
    out = Output()
    op.process_batch(with_system_columns(data, None, np.array([0, 0, 0])), 0, out)
    op.on_watermark(9999, out)
    assert [r[:2] for _, r in changes(out)] == [("b", 3)]
    late = with_system_columns(data.slice(0, 1), None, np.array([9999]))
    op.process_batch(late, 0, out)
    op.end_input(0, out)
    assert [r[:2] for _, r in changes(out)] == [("c", 2)]


def test_temporal_sort_emits_in_time_order() -> None:
    op = make("TemporalSort", TS, order=[{"index": 0, "descending": False, "nulls_first": True}])
    out = Output()
    op.process_batch(_ts_batch([(3000, "c"), (1000, "a"), (2000, "b"), (9000, "z")], [0, 0, 0, 0]), 0, out)
    op.on_watermark(3000, out)
    assert [r[1] for _, r in changes(out)] == ["a", "b", "c"]
    op.process_batch(_ts_batch([(2500, "late")], [3000]), 0, out)
    op.end_input(0, out)
    assert [r[1] for _, r in changes(out)] == ["z"]
