"""Vectorized accumulators: values, NULL handling, retraction, DISTINCT, FILTER."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest

from runtime.aggregates.aggset import AggregateSet, empty_results
from runtime.aggregates.types import infer_aggregate
from runtime.errors import JobError
from runtime.plan_params import AggCallParams
from runtime.types import BIGINT, DECIMAL, DOUBLE, INT, STRING, DataType


def _call(
    name: str, args: list[int], arg_types: list[DataType], distinct: bool = False, filt: int | None = None, **params
) -> AggCallParams:
    return AggCallParams(name, tuple(args), infer_aggregate(name, arg_types), distinct, filt, params)


def _run(calls, batch: pa.RecordBatch, slots, signs=None, retract=False):
    agg = AggregateSet(calls, [f.type for f in batch.schema], retract)
    slots = np.asarray(slots, dtype=np.int64)
    signs = np.ones(len(slots), dtype=np.int64) if signs is None else np.asarray(signs, dtype=np.int64)
    agg.fold(slots, signs, batch)
    return agg, [r.to_pylist() for r in agg.results(np.arange(int(slots.max()) + 1))]


def test_avg_int_truncates_toward_zero_and_types_match_inference() -> None:
    b = pa.RecordBatch.from_arrays([pa.array([-2, -3, -2, 3, 3, 10], pa.int32())], names=["v"])
    calls = [_call("avg", [0], [INT()]), _call("sum", [0], [INT()]), _call("sum0", [0], [INT()])]
    agg, res = _run(calls, b, [0, 0, 0, 1, 1, 1])
    assert res[0] == [-2, 5]
    assert res[1] == [-7, 16]
    for call, arr in zip(calls, agg.results(np.array([0, 1])), strict=True):
        assert arr.type == call.type.to_arrow()


def test_sum_avg_of_only_nulls_is_null_but_sum0_zero_and_count_zero() -> None:
    b = pa.RecordBatch.from_arrays([pa.array([None, None], pa.int32())], names=["v"])
    calls = [
        _call("sum", [0], [INT()]),
        _call("avg", [0], [INT()]),
        _call("sum0", [0], [INT()]),
        _call("count", [0], [INT()]),
        _call("count", [], []),
    ]
    _, res = _run(calls, b, [0, 0])
    assert res == [[None], [None], [0], [0], [2]]


def test_decimal_avg_scale_and_rounding() -> None:
    t = DECIMAL(5, 2)
    b = pa.RecordBatch.from_arrays(
        [pa.array([decimal.Decimal("1.00"), decimal.Decimal("2.00"), decimal.Decimal("2.00")], t.to_arrow())],
        names=["d"],
    )
    calls = [_call("avg", [0], [t]), _call("sum", [0], [t])]
    agg, res = _run(calls, b, [0, 0, 0])
    assert res[0] == [decimal.Decimal("1.666667")]  # DECIMAL(38, 6), HALF_UP
    assert res[1] == [decimal.Decimal("5.00")]
    assert agg.results(np.array([0]))[0].type == pa.decimal128(38, 6)


def test_double_avg() -> None:
    b = pa.RecordBatch.from_arrays([pa.array([1.5, -1.0, 3.0, None])], names=["d"])
    _, res = _run([_call("avg", [0], [DOUBLE()])], b, [0, 0, 0, 0])
    assert res[0] == [1.1666666666666667]


def test_min_max_strings_use_java_utf16_order() -> None:
    # U+FF5E (BMP, above the surrogates) vs U+1F600 (a surrogate pair in UTF-16):
    # code points say the emoji is larger, UTF-16 code units say it is smaller.
    b = pa.RecordBatch.from_arrays([pa.array(["\uff5e", "\U0001f600", "z", "ü"])], names=["s"])
    calls = [_call("min", [0], [STRING()]), _call("max", [0], [STRING()])]
    _, res = _run(calls, b, [0, 0, 1, 1])
    assert res[0] == ["\U0001f600", "z"]
    assert res[1] == ["\uff5e", "ü"]
    _, res = _run(calls, b, [0, 0, 1, 1], retract=True)
    assert res[0] == ["\U0001f600", "z"] and res[1] == ["\uff5e", "ü"]


def test_min_max_with_retraction_keep_multisets() -> None:
    b = pa.RecordBatch.from_arrays([pa.array([5, 9, 9, 9, 1], pa.int32())], names=["v"])
    calls = [_call("min", [0], [INT()]), _call("max", [0], [INT()])]
    agg = AggregateSet(calls, [pa.int32()], retract=True)
    agg.fold(np.zeros(5, dtype=np.int64), np.ones(5, dtype=np.int64), b)
    # retract one 9 and the 1: max stays 9 (a second 9 remains), min goes back to 5
    agg.fold(np.zeros(2, dtype=np.int64), -np.ones(2, dtype=np.int64), b.slice(3, 2))
    assert [r.to_pylist() for r in agg.results(np.array([0]))] == [[5], [9]]


def test_non_retractable_aggregates_refuse_retraction() -> None:
    # Insert-only input (retract=False) picks the append-only LISTAGG, which refuses -U/-D;
    # a changelog input (retract=True) picks the retractable one.
    b = pa.RecordBatch.from_arrays([pa.array(["a"])], names=["s"])
    agg = AggregateSet([_call("listagg", [0], [STRING()])], [pa.string()], retract=False)
    with pytest.raises(JobError, match="LISTAGG"):
        agg.fold(np.zeros(1, dtype=np.int64), -np.ones(1, dtype=np.int64), b)
    agg = AggregateSet([_call("listagg", [0], [STRING()])], [pa.string()], retract=True)
    agg.fold(np.zeros(2, dtype=np.int64), np.ones(2, dtype=np.int64), pa.concat_batches([b, b]))
    agg.fold(np.zeros(1, dtype=np.int64), -np.ones(1, dtype=np.int64), b)
    assert agg.results(np.zeros(1, dtype=np.int64))[0].to_pylist() == ["a"]


def test_listagg_first_last_value_skip_nulls_in_arrival_order() -> None:
    b = pa.RecordBatch.from_arrays([pa.array(["x", None, "y", "z", None])], names=["s"])
    calls = [
        _call("listagg", [0], [STRING()]),
        _call("listagg", [0], [STRING()], separator="|"),
        _call("first_value", [0], [STRING()]),
        _call("last_value", [0], [STRING()]),
    ]
    agg, res = _run(calls, b, [0, 0, 0, 0, 1])
    assert res == [["x,y,z", None], ["x|y|z", None], ["x", None], ["z", None]]
    # a second batch appends / keeps the first value / replaces the last value
    b2 = pa.RecordBatch.from_arrays([pa.array(["w", "v"])], names=["s"])
    agg.fold(np.array([0, 1]), np.ones(2, dtype=np.int64), b2)
    assert [r.to_pylist() for r in agg.results(np.array([0, 1]))] == [
        ["x,y,z,w", "v"],
        ["x|y|z|w", "v"],
        ["x", "v"],
        ["w", "v"],
    ]


def test_distinct_flag_and_filter() -> None:
    b = pa.RecordBatch.from_arrays(
        [pa.array([1, 1, 2, None, 2, 3], pa.int32()), pa.array([True, True, True, True, None, False])], names=["v", "f"]
    )
    calls = [
        _call("count", [0], [INT()], distinct=True),
        _call("sum", [0], [INT()], distinct=True),
        _call("count", [0], [INT()], distinct=True, filt=1),
        _call("count", [], [], filt=1),
    ]
    agg, res = _run(calls, b, [0] * 6)
    assert res == [[3], [6], [2], [4]]
    # retract one of the two 1s: still distinct {1, 2, 3}; retract the other: {2, 3}
    agg.fold(np.array([0]), np.array([-1]), b.slice(0, 1))
    assert agg.results(np.array([0]))[0].to_pylist() == [3]
    agg.fold(np.array([0]), np.array([-1]), b.slice(0, 1))
    assert agg.results(np.array([0]))[0].to_pylist() == [2]
    assert agg.results(np.array([0]))[1].to_pylist() == [5]


def test_empty_results_for_global_batch_aggregate() -> None:
    calls = [_call("count", [], []), _call("sum", [0], [INT()]), _call("max", [0], [INT()])]
    assert [a.to_pylist() for a in empty_results(calls)] == [[0], [None], [None]]
    assert empty_results(calls)[0].type == BIGINT().to_arrow()
