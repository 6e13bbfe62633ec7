"""In-memory keyed state (`state.backend.type` = `hashmap`).

The key index is vectorized (runtime/state/hashindex.py): a batch's lookup is a few numpy
passes (hash every key column, probe an open-addressing table in rounds, compare the
candidates' stored key columns exactly), with no Python object per key. Keys are kept
columnar per slot (runtime/state/keycolumns.py); `keys_of` turns them back into Python
tuples only when an operator emits them.

Snapshots keep the format the rocksdb backend shares (`slots`, `keys`, `key_groups`), so
savepoints move between backends. `keys` is a `SnapshotKeys`: the key columns as Arrow
arrays, written as one Arrow IPC stream and restored columnar into the key store (no
Python object per key), and also the sequence of normalised key tuples the rocksdb
backend reads. A snapshot whose keys are tuples (rocksdb's) keeps them pending until the
first lookup tells their Arrow types (e.g. a TIMESTAMP(3) key must hash as its
millisecond value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.distinct import sorted_distinct_first_inverse
from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend, encode_rows
from runtime.state.hashindex import BatchKeys, KeyIndex
from runtime.state.keycolumns import SnapshotKeys, denormalize_value, kind_of, normalize_value
from runtime.state.keygroups import key_groups_of_rows

# A batch of at least this many rows with one key column is looked up by its distinct values.
_DEDUPE_ROWS = 1024
# The direct-address cache of a single integer key column holds at most this many entries
# (8 bytes each).
_DIRECT_MAX = 1 << 21

_normalize = normalize_value  # the snapshot format of a key value (kept under its old name)


def distinct_keys(
    keys: Sequence[pa.Array],
    num_rows: int,
    max_parallelism: int = DEFAULT_MAX_PARALLELISM,
    group_columns: Sequence[int] | None = None,
) -> tuple[np.ndarray, list[tuple[Any, ...]], np.ndarray]:
    """The batch's distinct keys as dict-safe tuples, each row's index into them, and
    each distinct key's key group (`keygroups.key_groups_of_rows`, the function the hash
    exchange routes by).

    The rocksdb backend looks keys up once per distinct key of a batch (the loop over
    distinct keys is its own); the grouping itself is vectorized (`encode_rows`). No rows,
    no keys. `group_columns`: the positions of the key columns that decide the key group
    (`KeyedStateBackend.group_key_columns`; None: all)."""
    inverse, first = encode_rows(keys, num_rows)
    if len(first) == 0:
        return inverse, [], np.zeros(0, dtype=np.int32)
    if not keys:
        return inverse, [()], np.zeros(1, dtype=np.int32)
    taken = [k.take(pa.array(first)) for k in keys]
    routed = taken if group_columns is None else [taken[i] for i in group_columns]
    groups = key_groups_of_rows(routed, len(first), max_parallelism) if routed else np.zeros(len(first), np.int32)
    cols = [k.to_pylist() for k in taken]
    return inverse, [tuple(_normalize(v) for v in row) for row in zip(*cols, strict=True)], groups


def _grown(arr: np.ndarray, n: int) -> np.ndarray:
    if n <= len(arr):
        return arr
    new = np.zeros(max(n, 2 * len(arr), 16), dtype=arr.dtype)
    new[: len(arr)] = arr
    return new


class HashMapStateBackend(KeyedStateBackend):
    """Keys → dense slots through a vectorized hash index (module docstring).

    Per slot it keeps: live flag, key group, insertion sequence (for `live_slots` in
    insertion order) in numpy arrays; freed slots are reused last-freed first."""

    stable_slots = True

    def __init__(self, max_parallelism: int = DEFAULT_MAX_PARALLELISM) -> None:
        self.max_parallelism = max_parallelism
        self._index = KeyIndex()
        self._capacity = 0
        self._count = 0
        self._live = np.zeros(16, dtype=bool)
        self._groups = np.zeros(16, dtype=np.int32)
        self._seq = np.zeros(16, dtype=np.int64)  # insertion sequence, for ordered scans
        self._next_seq = 0
        self._free = np.zeros(0, dtype=np.int64)  # a stack: the last freed slot is reused first
        self._nfree = 0
        # Restored keys whose Arrow types are not known yet (slot -> normalised tuple).
        self._pending: dict[int, tuple[Any, ...]] | None = None
        self._global = -1  # the slot of the empty key `()` (no key columns: global state)
        # Whether a large batch's single key column is dictionary-encoded before the probe
        # (`_lookup_distinct`); turned off for good once a batch shows mostly distinct keys.
        self._dedupe = True
        # Single integer key column: slot per key value in [lo, lo + len) (-1: not known
        # here, ask the index), a cache in front of the hash index (`_lookup_direct`); off
        # for good once the key is not such a column or its values spread too far.
        self._direct: np.ndarray | None = None
        self._direct_lo = 0
        self._direct_ok = True
        self._direct_key = np.zeros(0, dtype=np.int64)  # the key value of each cached slot

    # ------------------------------------------------------------------ lookup
    def lookup(self, keys: Sequence[pa.Array], num_rows: int, create: bool = True) -> np.ndarray:
        if num_rows == 0:
            return np.zeros(0, dtype=np.int64)
        if not keys:
            return np.full(num_rows, self._global_slot(create), dtype=np.int64)
        if self._direct_ok and len(keys) == 1:
            slots = self._lookup_direct(keys[0], create)
            if slots is not None:
                return slots
        return self._lookup_general(keys, num_rows, create)

    def _lookup_general(self, keys: Sequence[pa.Array], num_rows: int, create: bool) -> np.ndarray:
        if self._dedupe and len(keys) == 1 and num_rows >= _DEDUPE_ROWS:
            slots = self._lookup_distinct(keys[0], num_rows, create)
            if slots is not None:
                return slots
        return self._lookup_rows(keys, num_rows, create)

    def _lookup_direct(self, key: pa.Array | pa.ChunkedArray, create: bool) -> np.ndarray | None:
        """`lookup` of a single integer key column through the direct-address cache: one
        gather per row; only the rows whose value is not cached yet go to the index (and
        are cached). None: not applicable to this batch (NULL keys) or at all any more."""
        if isinstance(key, pa.ChunkedArray):
            key = key.combine_chunks()
        t = key.type
        if not pa.types.is_integer(t) or pa.types.is_uint64(t):
            self._direct_ok = False
            return None
        if key.null_count:
            return None
        v = key.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        if not self._direct_covers(int(v.min()), int(v.max()), len(v)):
            return None
        off = v - self._direct_lo
        assert self._direct is not None
        slots = self._direct[off]
        miss = np.flatnonzero(slots < 0)
        if len(miss):
            got = self._lookup_general([key.take(pa.array(miss, type=pa.int64()))], len(miss), create)
            slots[miss] = got
            known = got >= 0
            new_slots = got[known]
            self._direct[off[miss[known]]] = new_slots
            self._direct_key = _grown(self._direct_key, self._capacity)
            self._direct_key[new_slots] = v[miss[known]]
        return slots

    def _direct_covers(self, lo: int, hi: int, rows: int) -> bool:
        """Make the cache cover [lo, hi] (growing it), or turn it off when that range is
        wider than `_DIRECT_MAX` or far wider than the keys it would hold."""
        if self._direct is not None and lo >= self._direct_lo and hi < self._direct_lo + len(self._direct):
            return True
        old = self._direct
        if old is not None:
            lo, hi = min(lo, self._direct_lo), max(hi, self._direct_lo + len(old) - 1)
        span = hi - lo + 1
        size = max(2 * span, 4096)
        if size > _DIRECT_MAX or span > 64 * (self._count + rows):
            self._direct, self._direct_ok = None, False
            return False
        table = np.full(size, -1, dtype=np.int64)
        new_lo = lo - (size - span) // 2
        if old is not None:
            at = self._direct_lo - new_lo
            table[at : at + len(old)] = old
        self._direct, self._direct_lo = table, new_lo
        return True

    def _lookup_rows(self, keys: Sequence[pa.Array], num_rows: int, create: bool) -> np.ndarray:
        """`lookup` probing every row (or every distinct value of a Python-grouped column)."""
        batch = BatchKeys(keys, num_rows)
        self._prepare(batch)
        slots = self._index.find(batch)
        missing = np.flatnonzero(slots < 0)
        added: list[np.ndarray] = []
        while create and len(missing):  # one round, more only after a true 64-bit collision
            _, first, group = sorted_distinct_first_inverse(batch.hashes[missing])
            order = np.argsort(first, kind="stable")  # new keys get slots in order of first appearance
            new_units = missing[first[order]]
            new_slots = self._allocate(len(new_units))
            self._index.add(batch, new_units, new_slots)
            self._groups[new_slots] = batch.key_groups(new_units, self.max_parallelism, self.group_key_columns)
            slots[new_units] = new_slots
            added.append(new_units)
            # The other missing units have the hash of one just added: the same key, or
            # (a true 64-bit collision) another new key, added in the next round.
            slot_of_group = np.empty(len(first), dtype=np.int64)
            slot_of_group[order] = new_slots
            rest = np.ones(len(missing), dtype=bool)
            rest[first] = False
            candidate = slot_of_group[group.reshape(-1)[rest]]
            missing = missing[rest]
            same = self._index.same_keys(batch, missing, candidate)
            slots[missing[same]] = candidate[same]
            missing = missing[~same]
        if added:  # insertion order = order of first appearance in the batch
            new_units = np.sort(np.concatenate(added)) if len(added) > 1 else added[0]
            self._mark_new(slots[new_units])
        return batch.per_row(slots)

    def _lookup_distinct(self, key: pa.Array | pa.ChunkedArray, num_rows: int, create: bool) -> np.ndarray | None:
        """`lookup` of a large batch's single key column through its distinct values: Arrow's
        dictionary encoding (a C++ hash pass, in order of first appearance, so new keys
        still get slots in that order) leaves the index one probe per distinct key instead
        of one per row. None when the column cannot be encoded (the caller probes rows)."""
        if isinstance(key, pa.ChunkedArray):
            key = key.combine_chunks()
        if pa.types.is_dictionary(key.type) or pa.types.is_nested(key.type):
            return None
        try:
            encoded = pc.dictionary_encode(key, null_encoding="encode")
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            self._dedupe = False
            return None
        distinct = encoded.dictionary
        if len(distinct) * 2 > num_rows:  # mostly distinct keys: encoding would not pay
            self._dedupe = False
        slots = self._lookup_rows([distinct], len(distinct), create)
        return slots[encoded.indices.to_numpy(zero_copy_only=False)]

    def _mark_new(self, slots: np.ndarray) -> None:
        self._live[slots] = True
        self._seq[slots] = np.arange(self._next_seq, self._next_seq + len(slots), dtype=np.int64)
        self._next_seq += len(slots)
        self._count += len(slots)

    def _global_slot(self, create: bool) -> int:
        """The slot of the empty key (an operator without key columns: one global state)."""
        if self._global < 0 and create:
            self._global = int(self._allocate(1)[0])
            self._groups[self._global] = 0  # the global key: "single" exchanges route to subtask 0
            self._mark_new(np.array([self._global], dtype=np.int64))
        return self._global

    def _prepare(self, batch: BatchKeys) -> None:
        """Fix the key columns' kinds from the first batch; add restored keys now that
        their types are known."""
        self._index.ensure_stores(batch)
        if self._pending is not None:
            pending, self._pending = self._pending, None
            slots = np.array(sorted(pending), dtype=np.int64)
            self._index.add_values(slots, [pending[s] for s in slots.tolist()])

    def _allocate(self, m: int) -> np.ndarray:
        reused = min(m, self._nfree)
        out = np.empty(m, dtype=np.int64)
        out[:reused] = self._free[self._nfree - reused : self._nfree][::-1]
        self._nfree -= reused
        fresh = m - reused
        out[reused:] = np.arange(self._capacity, self._capacity + fresh, dtype=np.int64)
        self._capacity += fresh
        self._live = _grown(self._live, self._capacity)
        self._groups = _grown(self._groups, self._capacity)
        self._seq = _grown(self._seq, self._capacity)
        return out

    # ------------------------------------------------------------------ removal / queries
    def remove(self, slots: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        slots = slots[(slots >= 0) & (slots < self._capacity)]
        slots = slots[self._live[slots]]
        if not len(slots):
            return
        slots = np.sort(slots)
        if len(slots) > 1:
            slots = slots[np.concatenate([[True], slots[1:] != slots[:-1]])]
        if self._direct is not None:  # forget the cached key values of these slots
            cached = slots[slots < len(self._direct_key)]
            at = self._direct_key[cached] - self._direct_lo
            inside = (at >= 0) & (at < len(self._direct))
            at, cached = at[inside], cached[inside]
            mine = self._direct[at] == cached
            self._direct[at[mine]] = -1
        self._live[slots] = False
        self._count -= len(slots)
        if self._global >= 0 and (slots == self._global).any():
            slots_of_keys = slots[slots != self._global]
            self._global = -1
        else:
            slots_of_keys = slots
        if self._pending is not None:
            for s in slots_of_keys.tolist():
                self._pending.pop(s, None)
        elif len(slots_of_keys):
            self._index.drop(slots_of_keys, lambda: np.flatnonzero(self._live[: self._capacity]))
        self._free = _grown(self._free, self._nfree + len(slots))
        self._free[self._nfree : self._nfree + len(slots)] = slots
        self._nfree += len(slots)

    def contains(self, slots: np.ndarray) -> np.ndarray:
        slots = np.asarray(slots, dtype=np.int64)
        ok = (slots >= 0) & (slots < self._capacity)
        out = np.zeros(len(slots), dtype=bool)
        out[ok] = self._live[slots[ok]]
        return out

    def key_groups(self, slots: np.ndarray) -> np.ndarray:
        return self._groups[np.asarray(slots, dtype=np.int64)]

    def key_arrays(self, slots: np.ndarray, types: Sequence[pa.DataType]) -> list[pa.Array]:
        """The key columns of these slots as Arrow arrays of these types, straight from the
        columnar key store (no Python object per key)."""
        slots = np.asarray(slots, dtype=np.int64)
        stores = self._index.stores
        if self._pending is not None or stores is None or (self._global >= 0 and (slots == self._global).any()):
            return super().key_arrays(slots, types)
        return [store.array(slots).cast(t) for store, t in zip(stores, types, strict=True)]

    def keys_of(self, slots: np.ndarray) -> list[tuple[Any, ...]]:
        return self._tuples(np.asarray(slots, dtype=np.int64), normalized=False)

    def _tuples(self, slots: np.ndarray, normalized: bool) -> list[tuple[Any, ...]]:
        """Key tuples of these slots (the global slot's is `()`)."""
        if self._global >= 0:
            is_global = slots == self._global
            if is_global.any():
                out: list[tuple[Any, ...]] = [()] * len(slots)
                others = np.flatnonzero(~is_global)
                for i, key in zip(others.tolist(), self._tuples(slots[others], normalized), strict=True):
                    out[i] = key
                return out
        if self._pending is not None:
            pending = self._pending
            if normalized:
                return [pending[s] for s in slots.tolist()]
            return [tuple(denormalize_value(v) for v in pending[s]) for s in slots.tolist()]
        stores = self._index.stores or []
        if not stores:
            return [()] * len(slots)
        cols = [store.values(slots, normalized) for store in stores]
        return list(zip(*cols, strict=True))

    def live_slots(self) -> np.ndarray:
        live = np.flatnonzero(self._live[: self._capacity])
        return live[np.argsort(self._seq[live], kind="stable")]

    @property
    def capacity(self) -> int:
        return self._capacity

    def __len__(self) -> int:
        return self._count

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        live = self.live_slots()
        return {
            "max_parallelism": self.max_parallelism,
            # arrays, not lists: the state format writes them as raw buffers
            "slots": live.astype(np.int64, copy=False),
            "keys": self._snapshot_keys(live),
            "key_groups": self._groups[live],
        }

    def _snapshot_keys(self, live: np.ndarray) -> SnapshotKeys | list[tuple[Any, ...]]:
        """The live keys column by column (`SnapshotKeys`: Arrow arrays straight from the
        key store); as normalised tuples only when there are no key columns to take them
        from (global state, or restored keys not yet typed by a lookup)."""
        stores = self._index.stores
        if self._pending is None and stores and not (self._global >= 0 and (live == self._global).any()):
            return SnapshotKeys([store.array(live) for store in stores])
        return self._tuples(live, normalized=True)

    def restore(self, snap: dict[str, Any], key_group_range: tuple[int, int] | None = None) -> None:
        """Restore the same slot numbers (operators' value arrays are indexed by them).
        With a key-group range (rescaling), keys outside it are skipped."""
        self.__init__(snap.get("max_parallelism", self.max_parallelism))  # type: ignore[misc]
        slots = np.asarray(snap["slots"], dtype=np.int64)
        groups = np.asarray(snap["key_groups"], dtype=np.int32)
        keys = snap["keys"]
        keep = np.ones(len(slots), dtype=bool)
        if key_group_range is not None:
            keep = (groups >= key_group_range[0]) & (groups <= key_group_range[1])
        top = int(slots.max()) + 1 if len(slots) else 0
        self._capacity = top
        self._live = _grown(self._live, top)
        self._groups = _grown(self._groups, top)
        self._seq = _grown(self._seq, top)
        kept = slots[keep]
        self._live[kept] = True
        self._groups[kept] = groups[keep]
        self._seq[kept] = np.arange(len(kept), dtype=np.int64)  # snapshot order = insertion order
        self._next_seq = len(kept)
        self._count = len(kept)
        if isinstance(keys, SnapshotKeys) and all(kind_of(c.type) != "null" for c in keys.columns):
            self._restore_columns(kept, keys if keep.all() else keys.take(keep))
        else:
            self._restore_tuples(slots, keys, keep)
        free = np.flatnonzero(~self._live[:top])
        self._free, self._nfree = free.astype(np.int64), len(free)

    def _restore_columns(self, slots: np.ndarray, keys: SnapshotKeys) -> None:
        """Columnar keys: straight into the key store and the hash table (vectorized; the
        columns' Arrow types are the store's types, as if they were the first batch)."""
        if not len(slots):
            return
        batch = BatchKeys(keys.columns, len(slots))
        self._index.ensure_stores(batch)
        self._index.add(batch, np.arange(batch.units, dtype=np.int64), slots)

    def _restore_tuples(self, slots: np.ndarray, keys: Sequence[Any], keep: np.ndarray) -> None:
        """Keys as normalised tuples (a `rocksdb` snapshot, global state): kept pending
        until the first lookup tells their Arrow types (e.g. a TIMESTAMP(3) key must hash
        as its millisecond value)."""
        self._pending = {}
        for s, k, m in zip(slots.tolist(), keys, keep.tolist(), strict=True):  # loop over restored keys
            if not m:
                continue
            if len(k) == 0:
                self._global = s
            else:
                self._pending[s] = tuple(k)
