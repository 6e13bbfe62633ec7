"""DistinctAcc (COUNT(DISTINCT ...)) against a plain multiset model: packed integer pairs,
the general hash index, the move from one to the other, retractions, reset, and the
checkpoint round trip."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from runtime.aggregates import distinct_pairs
from runtime.aggregates.accumulators import CountAcc, DistinctAcc
from runtime.aggregates.distinct_pairs import PackedPairs
from runtime.checkpoint import format as state_format
from runtime.types import BIGINT


def _model_counts(model: Counter[tuple[int, object]], slots: int) -> list[int]:
    return [sum(1 for (s, _), n in model.items() if s == slot and n > 0) for slot in range(slots)]


def _acc(t: pa.DataType) -> DistinctAcc:
    acc = DistinctAcc(CountAcc([t], BIGINT(False)))
    acc.grow(8)
    return acc


@pytest.mark.parametrize(
    ("t", "make"),
    [
        (pa.int32(), lambda r: int(r)),
        (pa.int64(), lambda r: int(r) * 10**12),  # spans more than 2^32: the general index
        (pa.string(), lambda r: f"v{r}"),
        (pa.date32(), lambda r: dt.date(2024, 1, 1) + dt.timedelta(days=int(r))),
    ],
)
def test_distinct_acc_matches_a_multiset(t: pa.DataType, make) -> None:
    rng = np.random.default_rng(5)
    acc = _acc(t)
    model: Counter[tuple[int, object]] = Counter()
    for step in range(40):
        n = int(rng.integers(1, 30))
        slots = rng.integers(0, 8, n).astype(np.int64)
        raw = rng.integers(0, 12, n)
        values = [make(r) for r in raw.tolist()]
        # retract only pairs that are present (a retract changelog never retracts more)
        signs = np.ones(n, dtype=np.int64)
        for i, (s, v) in enumerate(zip(slots.tolist(), values, strict=True)):
            if model[(s, v)] > 0 and rng.random() < 0.4:
                signs[i] = -1
                model[(s, v)] -= 1
            else:
                model[(s, v)] += 1
        acc.update(slots, signs, [pa.array(values, t)])
        if step % 13 == 12:  # a checkpoint and restore in the middle
            acc = state_format.unpack(state_format.pack(acc))
        if step % 17 == 16:
            gone = np.array([1, 5], dtype=np.int64)
            acc.reset(gone)
            for key in [k for k in model if k[0] in (1, 5)]:
                del model[key]
        got = acc.results(np.arange(8)).to_pylist()
        assert got == _model_counts(model, 8)


def test_packed_pairs_move_to_the_index_when_a_value_does_not_fit() -> None:
    acc = _acc(pa.int64())
    acc.update(np.array([0, 0, 1]), np.ones(3, dtype=np.int64), [pa.array([1, 2, 1], pa.int64())])
    assert isinstance(acc._packed, PackedPairs)
    acc.update(np.array([0, 1]), np.ones(2, dtype=np.int64), [pa.array([2**40, 1], pa.int64())])
    assert acc._packed is None
    assert acc.results(np.arange(2)).to_pylist() == [3, 1]


@pytest.mark.parametrize("fenced_from", [1 << 14, 4])
def test_packed_runs_merge_and_compact(monkeypatch: pytest.MonkeyPatch, fenced_from: int) -> None:
    """Also with every run of 4+ keys searched through its fences (the path of long runs)."""
    monkeypatch.setattr(distinct_pairs, "_FENCED", fenced_from)
    pairs = PackedPairs()
    total: Counter[tuple[int, int]] = Counter()
    rng = np.random.default_rng(1)
    for _ in range(50):
        s = rng.integers(0, 50, 200)
        v = rng.integers(-5, 5, 200)
        keys = np.unique(np.stack([s, v], axis=1), axis=0)
        assert pairs.fits(keys[:, 0], keys[:, 1])
        old, new = pairs.add(keys[:, 0], keys[:, 1], np.ones(len(keys), dtype=np.int64))
        assert old.tolist() == [total[k] for k in map(tuple, keys.tolist())]
        total.update(map(tuple, keys.tolist()))
    assert len(pairs.keys) <= 12  # runs merge: about log2 of the pairs
    pairs.drop_slots(np.arange(25))
    slots, values, counts = pairs.items()
    want = {k: n for k, n in total.items() if k[0] >= 25}
    assert dict(zip(zip(slots.tolist(), values.tolist(), strict=True), counts.tolist(), strict=True)) == want


def _fold_and_check(acc: DistinctAcc, model: Counter[tuple[int, object]], slots, values, signs, nslots: int) -> None:
    delta: Counter[tuple[int, object]] = Counter()
    for s, v, n in zip(slots, values, signs, strict=True):
        delta[(s, v)] += n
    for pair, n in delta.items():  # a batch's signs are summed per pair, then counts stay >= 0
        model[pair] = max(model[pair] + n, 0)
    acc.update(np.array(slots, dtype=np.int64), np.array(signs, dtype=np.int64), [pa.array(values, pa.int32())])
    assert acc.results(np.arange(nslots)).to_pylist() == _model_counts(model, nslots)


@pytest.mark.parametrize("leave", ["value", "slot", "count"])
def test_dense_pairs_hand_over_to_the_runs(monkeypatch: pytest.MonkeyPatch, leave: str) -> None:
    """Small-range integers start in the dense array; a value out of its range, a key slot
    past its cell budget or a count past its limit moves every pair on, and the counts go on."""
    monkeypatch.setattr(distinct_pairs.DensePairs, "MAX_CELLS", 64)
    monkeypatch.setattr(distinct_pairs.DensePairs, "_MAX_COUNT", 6)
    acc = _acc(pa.int32())
    model: Counter[tuple[int, object]] = Counter()
    rng = np.random.default_rng(3)
    for _ in range(3):  # duplicates and retractions within one batch, while dense
        s = rng.integers(0, 3, 20).tolist()
        v = rng.integers(0, 5, 20).tolist()
        _fold_and_check(acc, model, s, v, rng.choice([1, 1, -1], 20).tolist(), 8)
    assert acc._dense is not None
    if leave == "value":
        _fold_and_check(acc, model, [0, 1], [4000, 2], [1, 1], 8)
    elif leave == "slot":
        acc.grow(40)
        _fold_and_check(acc, model, [39, 1], [2, 2], [1, 1], 40)
    else:
        _fold_and_check(acc, model, [2] * 9, [3] * 9, [1] * 9, 8)
    assert acc._dense is None
    _fold_and_check(acc, model, [0, 1, 2], [1, 2, 3], [-1, -1, 1], 40 if leave == "slot" else 8)


def test_dense_pairs_one_row_per_changed_pair() -> None:
    pairs = distinct_pairs.DensePairs(0, 10)
    slots = np.array([0, 0, 1, 1, 1, 2], dtype=np.int64)
    values = np.array([3, 3, 3, 4, 3, 9], dtype=np.int64)
    assert pairs.fits(slots, values)
    got = pairs.add_rows(pairs.cells(slots, values), np.ones(6, dtype=np.int64))
    assert got is not None
    rows, signs = got
    assert sorted(zip(slots[rows].tolist(), values[rows].tolist(), strict=True)) == [(0, 3), (1, 3), (1, 4), (2, 9)]
    assert signs.tolist() == [1, 1, 1, 1]
    got = pairs.add_rows(pairs.cells(slots[:3], values[:3]), np.array([-1, -1, -1]))
    assert got is not None
    rows, signs = got
    assert (slots[rows].tolist(), signs.tolist()) == ([0], [-1])  # (1, 3) still counts 1
    assert [a.tolist() for a in pairs.items()] == [[1, 1, 2], [3, 4, 9], [1, 1, 1]]
    pairs.drop_slots(np.array([1]))
    assert pairs.items()[0].tolist() == [2]
    assert not pairs.fits(np.array([0]), np.array([10]))
