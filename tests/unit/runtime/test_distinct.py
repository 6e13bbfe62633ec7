"""runtime/distinct.py gives exactly `np.unique`'s answers (values, order, dtype, first rows)."""

from __future__ import annotations

import numpy as np
import pytest

from runtime.distinct import (
    first_appearance,
    sorted_distinct,
    sorted_distinct_first,
    sorted_distinct_first_inverse,
    sorted_distinct_inverse,
)


def _arrays() -> list[np.ndarray]:
    rng = np.random.default_rng(5)
    out = [np.zeros(0, dtype=np.int64), np.array([7]), np.array([3, 3, 3], dtype=np.int32)]
    for n in (10, 1000, 5000):
        out.append(rng.integers(0, 50, n))  # slots: small range, scattered
        out.append(rng.integers(-(10**6), 10**6, n))  # wide range, negatives: sorted
        out.append(rng.integers(1 << 40, (1 << 40) + 30, n))  # small range far from 0
        out.append(rng.integers(0, 1 << 62, n, dtype=np.uint64))
        out.append(rng.integers(0, 200, n).astype(np.int16))
    out.append(np.array([1.5, np.nan, 1.5, -2.0]))  # not integers: np.unique itself
    return out


@pytest.mark.parametrize("values", _arrays(), ids=lambda a: f"{a.dtype}-{len(a)}")
def test_same_as_np_unique(values: np.ndarray) -> None:
    want = np.unique(values)
    got = sorted_distinct(values)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    want_u, want_first = np.unique(values, return_index=True)
    got_u, got_first = sorted_distinct_first(values)
    np.testing.assert_array_equal(got_u, want_u)
    np.testing.assert_array_equal(got_first, want_first)
    want_u, want_inverse = np.unique(values, return_inverse=True)
    got_u, got_inverse = sorted_distinct_inverse(values)
    assert got_u.dtype == want_u.dtype
    np.testing.assert_array_equal(got_u, want_u)
    np.testing.assert_array_equal(got_inverse, want_inverse.reshape(-1))
    want_all = np.unique(values, return_index=True, return_inverse=True)
    for got_a, want_a in zip(sorted_distinct_first_inverse(values), want_all, strict=True):
        np.testing.assert_array_equal(got_a, want_a.reshape(-1))
    if values.dtype.kind in "iu":
        distinct, first = first_appearance(values)
        assert sorted(first.tolist()) == first.tolist()
        np.testing.assert_array_equal(np.sort(distinct), want)
        np.testing.assert_array_equal(values[first], distinct)
