"""Values in RocksDB: dirty tracking, WriteBatch flushes, key-group layout, native
checkpoints read back (runtime/state/rocksdb.py, runtime/state/slot_values.py)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import rocksdict

from runtime.state.rocksdb import RocksDBStateBackend, value_keys
from runtime.state.slot_values import (
    SlotArrayRef,
    decode_rows,
    dump_residual,
    encode_rows,
    find_slot_arrays,
    layout_of,
    load_residual,
    register_slot_container,
)


def _backend(tmp: Path) -> RocksDBStateBackend:
    return RocksDBStateBackend(config={"state.backend.rocksdb.localdir": str(tmp)})


def test_lookup_marks_dirty_and_write_values_clears_it(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    slots = b.lookup([pa.array([1, 2, 3, 2])], 4)
    assert sorted(b.dirty_slots().tolist()) == sorted(set(slots.tolist()))
    counts = np.zeros(b.capacity, dtype=np.int64)
    np.add.at(counts, slots, 1)
    assert b.write_values([counts]) == 3
    assert len(b.dirty_slots()) == 0
    b.lookup([pa.array([2])], 1, create=False)  # a read marks it (the operator may write it)
    b.mark_dirty(np.array([int(slots[0])]))
    assert sorted(b.dirty_slots().tolist()) == sorted({int(slots[0]), int(slots[1])})
    assert b.write_values([counts]) == 2
    b.dispose()


def test_value_entries_are_laid_out_by_key_group_and_removed_with_the_key(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    keys = pa.array(list(range(200)))
    slots = b.lookup([keys], 200)
    vals = np.arange(b.capacity, dtype=np.int64) * 10
    b.write_values([vals])
    groups = b.key_groups(slots)
    vk = value_keys(groups, slots)
    assert all(k[:2] == int(g).to_bytes(2, "big") and k[2] == 0 for k, g in zip(vk, groups.tolist(), strict=True))
    assert all(v is not None for v in b.db.get(vk))
    b.remove(slots[:50])
    got = b.db.get(vk)
    assert all(v is None for v in got[:50]) and all(v is not None for v in got[50:])
    # entries of one key group are contiguous: a range scan from the group's prefix sees only it
    g = int(groups[60])
    scanned = []
    for k, _ in b.db.items(from_key=g.to_bytes(2, "big")):
        if k[:2] != g.to_bytes(2, "big"):
            break
        scanned.append(k)
    assert len(scanned) == 2 * int((groups[50:] == g).sum())  # index entry + value entry per key
    b.dispose()


def test_encode_decode_rows_numeric_and_object() -> None:
    slots = np.array([3, 0, 2])
    seq = np.array([7, 8, 9, 10], dtype=np.int64)
    a = np.array([1.5, -2.0, 3.25, 4.0])
    c = np.array([10, 20, 30, 40], dtype=np.int32)
    o = np.empty(4, dtype=object)
    o[:] = [Decimal("1.10"), None, {"x": 2}, [1, 2]]
    rows = encode_rows([a, c, o], slots, seq)
    got_seq, (ga, gc, go) = decode_rows(rows, layout_of([a, c, o]))
    assert got_seq.tolist() == [10, 7, 9]
    assert ga.tolist() == [4.0, 1.5, 3.25] and gc.tolist() == [40, 10, 30] and gc.dtype == np.int32
    assert go.tolist() == [[1, 2], Decimal("1.10"), {"x": 2}]


class _Holder:
    def __init__(self, n: int) -> None:
        self.counts = np.zeros(n, dtype=np.int64)
        self.small = np.zeros(2, dtype=np.int64)  # shorter than the capacity: not a slot array
        self.seen: dict[int, int] = {1: 2}


def test_residual_cuts_out_declared_slot_arrays_only() -> None:
    register_slot_container(_Holder)
    h = _Holder(100_000)
    timers = np.arange(100_000)
    other = np.arange(20)  # a top-level array not declared in slot_attributes stays whole
    attrs = {"h": h, "timers": timers, "other": other}
    arrays = find_slot_arrays(attrs, ("timers",), capacity=99_000)
    assert {id(x) for x in arrays} == {id(h.counts), id(timers)}
    data = dump_residual(attrs, arrays)
    assert len(data) < 2000  # the 1.6 MB of slot arrays are not in it
    fresh = [np.full(6, 5, dtype=np.int64) for _ in arrays]
    back = load_residual(data, fresh)
    assert back["other"].tolist() == list(range(20)) and back["h"].small.tolist() == [0, 0]
    assert back["h"].seen == {1: 2}
    assert SlotArrayRef(0, "<i8") == SlotArrayRef(0, "<i8")


def test_native_checkpoint_read_back_with_key_group_range(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    keys = pa.array([f"k{i}" for i in range(300)])
    slots = b.lookup([keys], 300)
    vals = np.zeros(b.capacity, dtype=np.int64)
    vals[slots] = np.arange(300) * 3
    obj = np.empty(b.capacity, dtype=object)
    obj[slots] = [[i] for i in range(300)]
    b.remove(slots[:10])
    b.write_values([vals, obj])
    path = str(tmp_path / "cp")
    b.native_checkpoint(path)
    b.lookup([pa.array(["new"])], 1)  # later changes do not reach the checkpoint
    index, got_slots, (gv, go) = RocksDBStateBackend.read_native(path, layout_of([vals, obj]))
    assert got_slots.tolist() == slots[10:].tolist()  # insertion order
    assert [k[0] for k in index["keys"]] == [f"k{i}" for i in range(10, 300)]
    assert gv.tolist() == (np.arange(10, 300) * 3).tolist() and go.tolist() == [[i] for i in range(10, 300)]
    groups = np.array(index["key_groups"])
    part, ps, (pv, _) = RocksDBStateBackend.read_native(path, layout_of([vals, obj]), (0, 63))
    assert ps.tolist() == got_slots[groups <= 63].tolist() and len(part["keys"]) == len(ps)
    assert pv.tolist() == gv[groups <= 63].tolist()
    # the checkpoint is a RocksDB database of its own
    db = rocksdict.Rdict(path)
    assert db.get(b"\xff\xff" + int(slots[20]).to_bytes(8, "big")) is not None
    db.close()
    b.dispose()


def test_restore_marks_everything_dirty(tmp_path: Path) -> None:
    b = _backend(tmp_path)
    b.lookup([pa.array([1, 2, 3])], 3)
    snap = b.snapshot()
    c = _backend(tmp_path)
    c.restore(snap)
    assert sorted(c.dirty_slots().tolist()) == sorted(snap["slots"])
    b.dispose()
    c.dispose()
