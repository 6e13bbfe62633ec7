"""Keyed state on local disk (`state.backend.type` = `rocksdb`, via rocksdict).

The key index lives in RocksDB, laid out by key group: an entry's key is the 2-byte
big-endian key group followed by the key tuple as a MessagePack array (runtime/checkpoint/format.py), its value the slot; a reverse
entry (prefix 0xFFFF + the slot) holds the key for `keys_of` and snapshots. A key-group
range is therefore one contiguous RocksDB range (re-splitting state = range scans).
What stays in memory is per slot and small: live flag, key group, insertion sequence,
dirty flag (numpy arrays); operators keep their values in their own slot-indexed arrays
as with `hashmap`: those arrays are the working cache.

Values: at every checkpoint the generic operators (`Operator.checkpointing = "generic"`)
write the values of the slots written since the previous checkpoint (`dirty_slots`: every
slot a `lookup` returned, plus `mark_dirty`) into the same database with one WriteBatch
(`write_values`), an entry per key: key group (2 bytes), tag 0x00, slot (8 bytes) ->
insertion sequence + the slot's values (runtime/state/slot_values.py). Removed keys'
entries are deleted in `remove`'s WriteBatch. At a checkpoint the database therefore holds
the whole keyed state, so an incremental checkpoint is a RocksDB checkpoint
(`native_checkpoint`) and `read_native` rebuilds keys and values from one.

Hot path: `lookup` groups the batch by key vectorized (`encode_rows`), then does ONE
multi-get for the batch's distinct keys and writes all new keys with ONE WriteBatch: no
RocksDB round trip per row (the per-distinct-key Python work is encoding, as `hashmap`
does for its dict look-ups). Snapshots have the `hashmap` format, so a savepoint moves
between the two backends. `state.backend.rocksdb.localdir` is where the working
databases go (a temporary directory by default); they are deleted when the job ends.

Processes and fork: opening a database starts RocksDB's process-wide background threads
(flushes, compactions). fork() copies the pool's bookkeeping but not its threads, so in a
process forked after that, every flush (`close`, a full memtable, a native checkpoint)
waits forever. A backend therefore opens its database on first use (an operator that never
touches keyed state, e.g. a sink in the parallel executor's job process, opens none), the
process that started the threads is recorded (`threads_started_here`), and opening a
database in a process forked after that fails with a clear error instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa

from runtime.checkpoint import format as state_format
from runtime.errors import JobError
from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend
from runtime.state.hashmap import distinct_keys
from runtime.state.options import ROCKSDB_LOCAL_DIR
from runtime.state.slot_values import decode_rows, encode_rows, layout_of

_SLOT_PREFIX = b"\xff\xff"
_VALUE_TAG = 0  # an encoded key is a MessagePack array (0x90-0x9f, 0xdc, 0xdd): never 0x00


_threads_pid: int | None = None  # the process whose RocksDB background threads were started


class RocksDBForkError(JobError):
    """A database would be opened in a process forked after RocksDB's threads started."""


def threads_started_here() -> bool:
    """A RocksDB database was opened in this process, so its background threads run: a
    child forked from it now could not use RocksDB (see the module docstring)."""
    return _threads_pid == os.getpid()


def open_db(rocksdict: Any, path: str) -> Any:
    """Open (or create) the database at `path`, refusing to in a process forked after
    RocksDB's background threads were started in an ancestor (its flushes would hang)."""
    global _threads_pid
    if _threads_pid is not None and _threads_pid != os.getpid():
        raise RocksDBForkError(
            "the rocksdb state backend cannot be used in this process: it was forked from one "
            "that had already opened a RocksDB database, and RocksDB's background threads do not "
            "survive fork (flushes would wait forever); run the job in a new process"
        )
    db = rocksdict.Rdict(path)
    _threads_pid = os.getpid()
    return db


def _slot_key(slot: int) -> bytes:
    return _SLOT_PREFIX + int(slot).to_bytes(8, "big")


def value_keys(groups: np.ndarray, slots: np.ndarray) -> list[bytes]:
    """RocksDB keys of the value entries of `slots` (vectorized: one byte matrix)."""
    n = len(slots)
    mat = np.empty((n, 11), dtype=np.uint8)
    mat[:, :2] = np.asarray(groups, dtype=">u2").view(np.uint8).reshape(n, 2)
    mat[:, 2] = _VALUE_TAG
    mat[:, 3:] = np.asarray(slots, dtype=">u8").view(np.uint8).reshape(n, 8)
    return cast("list[bytes]", mat.view(np.dtype((np.void, 11))).ravel().tolist())


class RocksDBStateBackend(KeyedStateBackend):
    stores_values = True

    def __init__(self, max_parallelism: int = DEFAULT_MAX_PARALLELISM, config: dict[str, str] | None = None) -> None:
        import rocksdict  # optional dependency: imported when the rocksdb backend is used

        config = config or {}
        self.max_parallelism = max_parallelism
        base = ROCKSDB_LOCAL_DIR.get(config) or tempfile.gettempdir()
        name = f"streamsql-rocksdb-{os.getpid()}-{uuid.uuid4().hex[:8]}-{config.get('$internal.operator-uid', 'op')}"
        self.path = os.path.join(os.path.abspath(os.path.expanduser(base)), name)
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self._rocksdict = rocksdict
        self._db: Any = None  # opened on first use (see the module docstring)
        self._reset_memory()

    @property
    def db(self) -> Any:
        """The working database, opened (created) on first use."""
        if self._db is None:
            self._db = open_db(self._rocksdict, self.path)
        return self._db

    def _reset_memory(self) -> None:
        self._capacity = 0
        self._live = np.zeros(16, dtype=bool)
        self._groups = np.zeros(16, dtype=np.int32)
        self._seq = np.zeros(16, dtype=np.int64)
        self._dirty = np.zeros(16, dtype=bool)
        self._next_seq = 0
        self._free: list[int] = []
        self._layout: list[str] | None = None  # row format of the value entries written so far

    def _grow(self, n: int) -> None:
        if n <= len(self._live):
            return
        size = max(n, 2 * len(self._live))
        for name in ("_live", "_groups", "_seq", "_dirty"):
            old = getattr(self, name)
            new = np.zeros(size, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    @staticmethod
    def _encode(key: tuple[Any, ...], group: int) -> bytes:
        return group.to_bytes(2, "big") + state_format.pack_key(key)

    # ------------------------------------------------------------------ lookup
    def lookup(self, keys: Sequence[pa.Array], num_rows: int, create: bool = True) -> np.ndarray:
        inverse, distinct, groups = distinct_keys(keys, num_rows, self.max_parallelism, self.group_key_columns)
        if not distinct:
            return np.zeros(0, dtype=np.int64)
        group_list = groups.tolist()
        encoded = [self._encode(k, g) for k, g in zip(distinct, group_list, strict=True)]  # per distinct key
        found = self.db.get(encoded)  # one multi-get
        slots = np.array([-1 if s is None else s for s in found], dtype=np.int64)
        missing = np.flatnonzero(slots < 0)
        if create and len(missing):
            batch = self._rocksdict.WriteBatch()
            for i in missing.tolist():
                s = self._free.pop() if self._free else self._capacity
                if s == self._capacity:
                    self._capacity += 1
                    self._grow(self._capacity)
                kb, group = encoded[i], group_list[i]
                batch.put(kb, s)
                batch.put(_slot_key(s), kb)
                self._live[s] = True
                self._groups[s] = group
                self._seq[s] = self._next_seq
                self._next_seq += 1
                slots[i] = s
            self.db.write(batch)  # one WriteBatch for all new keys
        self._dirty[slots[slots >= 0]] = True
        return slots[inverse]

    def remove(self, slots: np.ndarray) -> None:
        slots = np.unique(np.asarray(slots, dtype=np.int64))
        slots = slots[(slots >= 0) & (slots < self._capacity)]
        slots = slots[self._live[slots]]
        if not len(slots):
            return
        kbs = self.db.get([_slot_key(s) for s in slots.tolist()])
        vks = value_keys(self._groups[slots], slots)
        batch = self._rocksdict.WriteBatch()
        for s, kb, vk in zip(slots.tolist(), kbs, vks, strict=True):
            if kb is not None:
                batch.delete(kb)
            batch.delete(_slot_key(s))
            batch.delete(vk)
        self.db.write(batch)
        self._live[slots] = False
        self._dirty[slots] = False
        self._free.extend(slots.tolist())

    def contains(self, slots: np.ndarray) -> np.ndarray:
        slots = np.asarray(slots, dtype=np.int64)
        ok = (slots >= 0) & (slots < self._capacity)
        out = np.zeros(len(slots), dtype=bool)
        out[ok] = self._live[slots[ok]]
        return out

    def key_groups(self, slots: np.ndarray) -> np.ndarray:
        return self._groups[np.asarray(slots, dtype=np.int64)]

    def keys_of(self, slots: np.ndarray) -> list[tuple[Any, ...]]:
        slots = np.asarray(slots, dtype=np.int64)
        if not len(slots):
            return []
        kbs = self.db.get([_slot_key(s) for s in slots.tolist()])  # one multi-get
        return [state_format.unpack_key(kb[2:]) for kb in kbs]

    def live_slots(self) -> np.ndarray:
        live = np.flatnonzero(self._live[: self._capacity])
        return live[np.argsort(self._seq[live], kind="stable")]

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return int(self._live[: self._capacity].sum())

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        live = self.live_slots()
        return {
            "max_parallelism": self.max_parallelism,
            # arrays, not lists: the state format writes them as raw buffers
            "slots": live.astype(np.int64, copy=False),
            "keys": self.keys_of(live),
            "key_groups": self._groups[live],
        }

    def restore(self, snap: dict[str, Any], key_group_range: tuple[int, int] | None = None) -> None:
        """Rebuild the database from a snapshot (same slots; keys outside the key-group
        range skipped)."""
        self.max_parallelism = int(snap.get("max_parallelism", self.max_parallelism))
        if self._db is not None:
            self._db.close()
            self._db = None
            self._rocksdict.Rdict.destroy(self.path)
        self._reset_memory()
        keys = snap["keys"]
        slots = np.asarray(snap["slots"], dtype=np.int64).tolist()
        groups = np.asarray(snap["key_groups"], dtype=np.int64).tolist()
        top = max(slots, default=-1) + 1
        self._capacity = top
        self._grow(top)
        batch = self._rocksdict.WriteBatch()
        for s, k, g in zip(slots, keys, groups, strict=True):
            if key_group_range is not None and not (key_group_range[0] <= g <= key_group_range[1]):
                continue
            kb = self._encode(tuple(k), int(g))
            batch.put(kb, s)
            batch.put(_slot_key(s), kb)
            self._live[s] = True
            self._groups[s] = g
            self._seq[s] = self._next_seq
            self._next_seq += 1
        if len(batch):  # an empty snapshot opens no database
            self.db.write(batch)
        self._free = [s for s in range(top) if not self._live[s]]
        self._dirty[: self._capacity] = self._live[: self._capacity]  # values come from the operator

    # ------------------------------------------------------------------ values
    def mark_dirty(self, slots: np.ndarray) -> None:
        """The operator wrote these slots' values without a `lookup` (vectorized)."""
        slots = np.asarray(slots, dtype=np.int64)
        self._dirty[slots[(slots >= 0) & (slots < self._capacity)]] = True

    def dirty_slots(self) -> np.ndarray:
        """Live slots written since the last `write_values`."""
        cap = self._capacity
        return np.flatnonzero(self._dirty[:cap] & self._live[:cap])

    def write_values(self, arrays: list[np.ndarray]) -> int:
        """Write the dirty slots' values (`arrays`: the operator's slot arrays) with one
        WriteBatch; a changed row format rewrites every live slot. Returns rows written."""
        layout = layout_of(arrays)
        if layout != self._layout:
            self._dirty[: self._capacity] |= self._live[: self._capacity]
            self._layout = layout
        slots = self.dirty_slots()
        if len(slots):
            batch = self._rocksdict.WriteBatch()
            put = batch.put
            for k, v in zip(value_keys(self._groups[slots], slots), encode_rows(arrays, slots, self._seq), strict=True):
                put(k, v)  # per dirty key: rocksdict has no bulk put
            self.db.write(batch)
        self._dirty[: self._capacity] = False
        return len(slots)

    def native_checkpoint(self, path: str) -> None:
        """A RocksDB checkpoint of the working database in `path` (memtable flushed; SST
        files hard-linked, so this costs little whatever the state size)."""
        self.db.flush(True)
        self._rocksdict.Checkpoint(self.db).create_checkpoint(path)

    @staticmethod
    def read_native(
        path: str, layout: list[str], key_group_range: tuple[int, int] | None = None
    ) -> tuple[dict[str, Any], np.ndarray, list[np.ndarray]]:
        """Keys and values of a database written by this backend (a restored RocksDB
        checkpoint): the key index in `snapshot()`'s format (slots in insertion order),
        the live slots in that order, and one value array per `layout` entry for them.
        Keys outside the key-group range are skipped (one range scan per bound)."""
        import rocksdict  # optional dependency: imported when the rocksdb backend is used

        db = open_db(rocksdict, path)
        try:
            lo = 0 if key_group_range is None else key_group_range[0]
            hi = 0xFFFF if key_group_range is None else key_group_range[1] + 1
            keys_by_slot: dict[int, Any] = {}
            vslots: list[int] = []
            blobs: list[bytes] = []
            for k, v in db.items(from_key=lo.to_bytes(2, "big")):  # per key: restore only
                if not isinstance(k, bytes) or int.from_bytes(k[:2], "big") >= hi:
                    break
                if k[2] == _VALUE_TAG:
                    vslots.append(int.from_bytes(k[3:], "big"))
                    blobs.append(v)
                else:
                    keys_by_slot[int(v)] = (k, int.from_bytes(k[:2], "big"))
        finally:
            db.close()
        seq, values = decode_rows(blobs, layout)
        order = np.argsort(seq, kind="stable")
        slots = np.asarray(vslots, dtype=np.int64)[order]
        values = [v[order] for v in values]
        entries = [keys_by_slot[s] for s in slots.tolist()]
        snap = {
            "slots": slots.tolist(),
            "keys": [state_format.unpack_key(kb[2:]) for kb, _ in entries],
            "key_groups": [g for _, g in entries],
        }
        return snap, slots, values

    def dispose(self) -> None:
        """Close and delete the working database (the job ended)."""
        if self._db is not None:
            self._db.close()
            self._db = None
            shutil.rmtree(self.path, ignore_errors=True)
