"""The `hashmap` backend's vectorized key index: key kinds, physical-type variants of one
key, output types, restore before the types are known, table growth with tombstones,
byte-heap compaction."""

from __future__ import annotations

import datetime
import decimal
import math

import numpy as np
import pyarrow as pa

from runtime.checkpoint import format as state_format
from runtime.state import HashMapStateBackend, key_groups_of_rows
from runtime.state.hashindex import OpenAddressingTable
from runtime.state.keycolumns import RowKeys, SnapshotKeys


def test_physical_variants_of_a_key_are_one_key() -> None:
    st = HashMapStateBackend()
    a = st.lookup([pa.array(["x", "y"]), pa.array([1, 2], type=pa.int64())], 2)
    b = st.lookup([pa.array(["y", "x"], type=pa.large_string()), pa.array([2, 1], type=pa.int32())], 2)
    c = st.lookup([pa.array(["x"]).dictionary_encode(), pa.chunked_array([pa.array([1], type=pa.int16())])], 1)
    assert b.tolist() == a[::-1].tolist() and c.tolist() == [a[0]]
    assert len(st) == 2


def test_null_nan_and_signed_zero_are_values() -> None:
    st = HashMapStateBackend()
    s = st.lookup([pa.array([None, float("nan"), -0.0, 0.0, float("nan"), None, 1.0])], 7)
    assert s[0] == s[5] and s[1] == s[4] and s[2] == s[3] and len(set(s.tolist())) == 4
    keys = st.keys_of(s[:4])
    assert keys[0] == (None,) and math.isnan(keys[1][0]) and keys[2] == (0.0,)
    snap = st.snapshot()
    assert ("__nan__",) in [k[0] for k in snap["keys"]]  # the shared snapshot format


def test_key_types_round_trip_through_keys_of_and_key_arrays() -> None:
    cols = [
        pa.array([True, False, None]),
        pa.array([datetime.date(2024, 1, 2), None, datetime.date(1970, 1, 1)], type=pa.date32()),
        pa.array([1_000, 2_000, None], type=pa.timestamp("ms")),
        pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-2.25")], type=pa.decimal128(10, 2)),
        pa.array([b"\x00\x01", b"", None], type=pa.binary()),
        pa.array([[1, 2], None, []], type=pa.list_(pa.int64())),
        pa.nulls(3),
    ]
    st = HashMapStateBackend()
    slots = st.lookup(cols, 3)
    assert len(set(slots.tolist())) == 3
    assert st.lookup(cols, 3, create=False).tolist() == slots.tolist()
    want = list(zip(*[c.to_pylist() for c in cols], strict=True))
    assert st.keys_of(slots) == want
    arrays = st.key_arrays(slots, [c.type for c in cols])
    assert [a.type for a in arrays] == [c.type for c in cols]
    assert [a.to_pylist() for a in arrays] == [c.to_pylist() for c in cols]
    assert st.key_groups(slots).tolist() == key_groups_of_rows(cols, 3, 128).tolist()


def test_restore_waits_for_the_key_types_of_the_first_lookup() -> None:
    ts = pa.array([5, 6, 7], type=pa.timestamp("ms"))
    st = HashMapStateBackend(max_parallelism=4)
    slots = st.lookup([ts, pa.array(["a", "b", "c"])], 3)
    st.remove(slots[1:2])
    snap = st.snapshot()
    back = HashMapStateBackend()
    back.restore(snap)
    assert back.keys_of(slots[[0, 2]]) == st.keys_of(slots[[0, 2]])  # before any lookup
    again_snap = back.snapshot()
    assert again_snap["keys"] == snap["keys"]
    assert again_snap["slots"].tolist() == snap["slots"].tolist()
    assert again_snap["key_groups"].tolist() == snap["key_groups"].tolist()
    again = back.lookup([ts, pa.array(["a", "b", "c"], type=pa.large_string())], 3)
    assert again[[0, 2]].tolist() == slots[[0, 2]].tolist()
    assert again[1] == slots[1]  # the freed slot is handed out again
    assert back.key_groups(again).tolist() == key_groups_of_rows([ts, pa.array(["a", "b", "c"])], 3, 4).tolist()


def test_many_keys_with_removals_keep_their_slots() -> None:
    st = HashMapStateBackend()
    keys = np.arange(60_000, dtype=np.int64) * 1_000_003
    slots = np.concatenate(
        [st.lookup([pa.array(keys[i : i + 8192])], len(keys[i : i + 8192])) for i in range(0, 60_000, 8192)]
    )
    assert len(np.unique(slots)) == 60_000
    for _ in range(5):  # churn: tombstones, rebuilds
        st.remove(slots[::2])
        slots[::2] = st.lookup([pa.array(keys[::2])], 30_000)
    assert st.lookup([pa.array(keys)], 60_000, create=False).tolist() == slots.tolist()
    assert st.lookup([pa.array(keys + 1)], 60_000, create=False).max() == -1
    assert len(st) == 60_000 and st.capacity == 60_000


def test_string_heap_is_compacted_and_keys_survive() -> None:
    st = HashMapStateBackend()
    live: dict[str, int] = {}
    for round_ in range(6):
        names = [f"{round_}-{'z' * 200}-{i}" for i in range(4000)]
        for name, slot in zip(names, st.lookup([pa.array(names)], len(names)).tolist(), strict=True):
            live[name] = slot
        old = [n for n in live if not n.startswith(f"{round_}-")]
        st.remove(np.array([live.pop(n) for n in old], dtype=np.int64))
    store = st._index.stores[0]  # type: ignore[index]
    assert store.heap_end < 3 * 4000 * 210
    names = list(live)
    assert st.lookup([pa.array(names)], len(names), create=False).tolist() == [live[n] for n in names]
    assert [k[0] for k in st.keys_of(np.array([live[n] for n in names]))] == names


def test_probe_resolves_collisions_exactly() -> None:
    table = OpenAddressingTable()
    same = np.full(3, 42, dtype=np.uint64)
    table.insert(same, np.array([7, 8, 9]))
    values = np.array([10, 20, 30])
    found = table.probe(same, lambda p, s: values[p] == (s - 6) * 10)
    assert found.tolist() == [7, 8, 9]
    table.remove(np.array([8]))
    assert table.probe(same, lambda p, s: values[p] == (s - 6) * 10).tolist() == [7, -1, 9]


def test_row_hash_ignores_physical_width_and_bytes_beyond_a_value() -> None:
    a = RowKeys(pa.array(["abcdefghij", "ab", None]))
    b = RowKeys(pa.array(["ab", "abcdefghij", None], type=pa.large_binary()))
    assert a.hash.tolist() == [b.hash[1], b.hash[0], b.hash[2]]
    assert RowKeys(pa.array([3], type=pa.int8())).hash[0] == RowKeys(pa.array([3])).hash[0]


def test_short_and_long_string_paths_hash_alike() -> None:
    short = ["", "a", "abcdefgh", "abcdefghi", "x" * 64]
    mixed = short + ["y" * 65]  # one long value: the whole batch takes the ragged path
    a, b = RowKeys(pa.array(short)), RowKeys(pa.array(mixed))
    assert a.hash.tolist() == b.hash[: len(short)].tolist()
    st = HashMapStateBackend()
    s1 = st.lookup([pa.array(short)], len(short))
    assert st.lookup([pa.array(mixed)], len(mixed))[: len(short)].tolist() == s1.tolist()
    assert st.lookup([pa.array(["x" * 63 + "y"])], 1, create=False).tolist() == [-1]


def test_snapshot_keys_are_columnar_and_restore_without_a_lookup() -> None:
    """The snapshot's keys are the key columns (one Arrow IPC stream in a state file); a
    restore puts them straight into the key index: lookups find them before any batch."""
    cols = [
        pa.array([1_000, 2_000, None, 4_000], type=pa.timestamp("ms")),
        pa.array(["a", None, "c", "a"]),
        pa.array([float("nan"), 1.5, -0.0, 2.0]),
        pa.array([[1, 2], None, [], [1, 2]], type=pa.list_(pa.int64())),
    ]
    st = HashMapStateBackend(max_parallelism=8)
    slots = st.lookup(cols, 4)
    st.remove(slots[1:2])
    snap = state_format.decode(state_format.encode(st.snapshot()))
    keys = snap["keys"]
    assert isinstance(keys, SnapshotKeys) and [c.type for c in keys.columns] == [c.type for c in cols]
    assert keys[0][2] == ("__nan__",) and keys[0][3] == (1, 2)  # the tuple view: normalised as before
    back = HashMapStateBackend()
    back.restore(snap)
    assert back._pending is None  # noqa: SLF001 - columnar: nothing waits for a lookup
    live = slots[[0, 2, 3]]
    assert repr(back.keys_of(live)) == repr(st.keys_of(live))  # repr: NaN equals itself
    again = back.lookup([c.cast(pa.large_string()) if c.type == pa.string() else c for c in cols], 4, create=False)
    assert again[[0, 2, 3]].tolist() == live.tolist() and again[1] == -1
    assert back.key_groups(live).tolist() == st.key_groups(live).tolist()
    part = HashMapStateBackend()
    part.restore(snap, key_group_range=(0, 3))
    kept = part.live_slots()
    assert set(kept.tolist()) == {s for s in live.tolist() if st.key_groups(np.array([s]))[0] <= 3}
    assert part.lookup(cols, 4, create=False)[[0, 2, 3]].tolist() == [s if s in kept else -1 for s in live.tolist()]
