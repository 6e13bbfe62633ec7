"""dense_group.group_by equals Arrow's hash aggregation (groups, values, NULLs, types), its
groups in order of first appearance, and it declines what it does not cover."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from runtime.aggregates import dense_group


def _table(rng: np.random.Generator, n: int) -> pa.Table:
    sl = rng.integers(0, 5, n) * 1000 + 7
    k = rng.integers(-3, 20, n).astype(np.int32)
    x = pa.array(rng.integers(-100, 100, n).astype(np.int32), mask=rng.random(n) < 0.2)
    y = pa.array(rng.integers(0, 9, n).astype(np.uint16))
    ts = pa.array(rng.integers(0, 50, n) * 10, pa.int64()).cast(pa.timestamp("ms"))
    return pa.table({"sl": sl, "k": k, "x": x, "y": y, "ts": ts})


@pytest.mark.parametrize("n", [1, 17, 2000])
def test_dense_group_by_equals_arrow(n: int) -> None:
    table = _table(np.random.default_rng(n), n)
    aggs = [("x", "sum"), ("x", "min"), ("x", "max"), ("y", "sum"), ("y", "max")]
    for keys, steps in ((["sl", "k"], [1000, 1]), (["k"], None), (["ts", "k"], [10, 1])):
        got = dense_group.group_by(table, keys, aggs, steps)
        want = table.group_by(keys, use_threads=False).aggregate(aggs)
        assert got is not None
        order = [(k, "ascending") for k in keys]
        assert got.select(want.column_names).sort_by(order).equals(want.sort_by(order))
        firsts: dict[tuple[object, ...], int] = {}
        for i, row in enumerate(table.select(keys).to_pylist()):
            firsts.setdefault(tuple(row.values()), i)
        assert [tuple(r.values()) for r in got.select(keys).to_pylist()] == sorted(firsts, key=lambda g: firsts[g])


def test_dense_group_by_declines() -> None:
    table = _table(np.random.default_rng(1), 100)
    assert dense_group.group_by(table.append_column("s", pa.array(["a"] * 100)), ["s"], [("x", "sum")]) is None
    assert dense_group.group_by(table, ["k"], [("x", "mean")]) is None
    wide = pa.table({"k": pa.array([0, 10**9]), "x": pa.array([1, 2])})
    assert dense_group.group_by(wide, ["k"], [("x", "sum")]) is None  # cells far beyond the rows
    nulls = pa.table({"k": pa.array([1, None]), "x": pa.array([1, 2])})
    assert dense_group.group_by(nulls, ["k"], [("x", "sum")]) is None
