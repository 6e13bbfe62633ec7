"""The in-memory keyed state backend: array keys, NULL keys, slot reuse, key groups,
snapshot / restore (also with a key-group range)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.state import HashMapStateBackend, create_backend, encode_rows, key_groups_of_rows


def test_encode_rows_groups_by_first_appearance_with_null_as_a_value() -> None:
    inv, first = encode_rows([pa.array(["b", None, "a", "b", None]), pa.array([1, 2, 1, 1, 2])], 5)
    assert inv.tolist() == [0, 1, 2, 0, 1]
    assert first.tolist() == [0, 1, 2]


def test_lookup_is_stable_across_batches_and_reuses_slots() -> None:
    st = HashMapStateBackend()
    s1 = st.lookup([pa.array(["a", "b", "a"])], 3)
    s2 = st.lookup([pa.array(["b", "c"])], 2)
    assert s1[0] == s1[2] and s2[0] == s1[1] and len(set(s1.tolist() + s2.tolist())) == 3
    assert st.lookup([pa.array(["zz"])], 1, create=False).tolist() == [-1]
    st.remove(np.array([s1[0]]))
    assert not st.contains(np.array([s1[0]]))[0]
    s3 = st.lookup([pa.array(["d"])], 1)
    assert s3[0] == s1[0]  # reused
    assert st.keys_of(s3) == [("d",)]
    assert st.live_slots().tolist() == [s1[1], s2[1], s3[0]]


def test_global_key_and_key_groups() -> None:
    st = create_backend({"pipeline.max-parallelism": "16"})
    assert st.lookup([], 4).tolist() == [0, 0, 0, 0]
    s = st.lookup([pa.array([7])], 1)
    assert st.key_groups(s)[0] == key_groups_of_rows([pa.array([7])], 1, 16)[0] < 16


def test_snapshot_restore_with_key_group_range() -> None:
    st = HashMapStateBackend(max_parallelism=4)
    keys = pa.array([f"k{i}" for i in range(20)])
    slots = st.lookup([keys], 20)
    snap = st.snapshot()
    full = HashMapStateBackend()
    full.restore(snap)
    assert full.lookup([keys], 20, create=False).tolist() == slots.tolist()
    part = HashMapStateBackend()
    part.restore(snap, key_group_range=(0, 1))
    got = part.lookup([keys], 20, create=False)
    groups = st.key_groups(slots)
    assert ((got >= 0) == (groups <= 1)).all()


def _plain() -> HashMapStateBackend:
    """A backend probing its hash index for every row (no cache, no batch dedupe)."""
    st = HashMapStateBackend()
    st._direct_ok = False
    st._dedupe = False
    return st


def test_integer_keys_through_the_direct_cache_and_dedupe_match_the_index() -> None:
    """Slots, first-appearance order of new keys, removal and reuse, a growing then too
    wide key range, NULL keys and create=False: the same as the plain index's."""
    rng = np.random.default_rng(11)
    fast, plain = HashMapStateBackend(), _plain()
    batches = [rng.integers(0, 50, 3000), rng.integers(-40, 90, 7), rng.integers(0, 400, 2500)]
    batches += [np.array([5, 10**12, 5]), rng.integers(0, 50, 1500)]  # too wide: the cache turns off
    for i, keys in enumerate(batches):
        col = pa.array(keys, pa.int32() if i < 3 else pa.int64())
        if i == 2:
            col = pa.array(keys.tolist()[:-1] + [None], pa.int32())  # a NULL key: the index
        a, b = fast.lookup([col], len(col)), plain.lookup([col], len(col))
        assert a.tolist() == b.tolist()
        gone = np.unique(a[::7])
        fast.remove(gone)
        plain.remove(gone)
        probe = pa.array(keys[:20], col.type)
        n = len(probe)
        assert fast.lookup([probe], n, create=False).tolist() == plain.lookup([probe], n, create=False).tolist()
    assert fast._direct is None and not fast._direct_ok
    assert fast.live_slots().tolist() == plain.live_slots().tolist()
