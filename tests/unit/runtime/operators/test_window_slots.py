"""The (window, key) → slot cache of WindowAggregate (runtime/operators/window_slots.py)
returns exactly the slots the state backend's lookup returns, in the same order of
creation, across windows opening and firing, a growing key range and restores."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.operators.window_slots import WindowSlotCache
from runtime.state.hashmap import HashMapStateBackend

UNIT = 1000


def _keys(rng: np.random.Generator, n: int, first_window: int, windows: int, key_hi: int) -> list[pa.Array]:
    end = (first_window + rng.integers(0, windows, n)) * UNIT + UNIT
    k = rng.integers(-key_hi // 4, key_hi, n).astype(np.int32)
    return [pa.array(end - UNIT), pa.array(end), pa.array(k)]


def test_cached_lookup_equals_the_backend_lookup() -> None:
    rng = np.random.default_rng(3)
    plain, cached = HashMapStateBackend(), HashMapStateBackend()
    cache = WindowSlotCache(UNIT)
    first = 0
    for step in range(60):
        n = int(rng.integers(1, 3000))
        key_hi = 50 if step < 20 else 5000  # the key range grows: the arrays are re-laid out
        keys = _keys(rng, n, first, int(rng.integers(1, 4)), key_hi)
        want = plain.lookup(keys, n)
        got = cache.lookup(cached, keys, keys[1].to_numpy())
        assert got.tolist() == want.tolist()
        assert cached.live_slots().tolist() == plain.live_slots().tolist()
        if step % 3 == 2:  # fire the first open window in both, as WindowAggregate does
            live = plain.live_slots()
            ends = np.array([plain.keys_of(np.array([s]))[0][1] for s in live.tolist()])
            due = live[ends - 1 <= first * UNIT + UNIT - 1]
            plain.remove(due)
            cached.remove(due)
            cache.fired(first * UNIT + UNIT - 1, lambda e: e - 1)
            first += 1
    assert cache.enabled and cache.windows


def test_restore_and_unusable_keys_fall_back_to_the_backend() -> None:
    state = HashMapStateBackend()
    cache = WindowSlotCache(UNIT)
    keys = [pa.array([0, 0]), pa.array([UNIT, UNIT]), pa.array([5, 6])]
    assert cache.lookup(state, keys, keys[1].to_numpy()).tolist() == [0, 1]
    snap = state.snapshot()
    state.remove(np.array([0, 1]))
    state.restore(snap)
    cache.clear()  # what the operator's after_restore does
    assert cache.lookup(state, keys, keys[1].to_numpy()).tolist() == [0, 1]
    with_null = [pa.array([0]), pa.array([UNIT]), pa.array([None], pa.int32())]
    assert cache.lookup(state, with_null, with_null[1].to_numpy()).tolist() == [2]
    assert cache.enabled  # NULL keys: this batch only
    wide = [pa.array([0, 0]), pa.array([UNIT, UNIT]), pa.array([0, 1 << 40])]
    assert cache.lookup(state, wide, wide[1].to_numpy()).tolist() == [3, 4]
    assert not cache.enabled  # keys spread too wide: off for good
    other = WindowSlotCache(UNIT)
    strings = [pa.array([0]), pa.array([UNIT]), pa.array(["a"])]
    assert other.lookup(HashMapStateBackend(), strings, strings[1].to_numpy()).tolist() == [0]
    assert not other.enabled  # not an integer key


def test_a_cache_that_never_hits_turns_itself_off() -> None:
    """One row per (window, key): every lookup misses, so after a few batches the cache
    stops adding work; the slots stay the backend's."""
    plain, cached = HashMapStateBackend(), HashMapStateBackend()
    cache = WindowSlotCache(UNIT)
    for w in range(12):
        keys = [pa.array([w * UNIT] * 50), pa.array([(w + 1) * UNIT] * 50), pa.array(np.arange(50))]
        assert cache.lookup(cached, keys, keys[1].to_numpy()).tolist() == plain.lookup(keys, 50).tolist()
    assert not cache.enabled and not cache.windows
