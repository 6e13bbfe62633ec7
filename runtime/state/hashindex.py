"""A vectorized hash index from composite keys to slots (the `hashmap` backend's core).

Why: a dict from Python key tuples costs a `to_pylist`, a tuple and a dict probe per
distinct key of every batch, which profiles showed as a quarter of a stateful job's time.
Here a whole batch is looked up with numpy:

1. every row gets a 64-bit hash of its key columns in canonical form (keycolumns.py).
   Without string columns it is `keygroups.hash_rows` itself, so a new key's key group is
   `hash % max_parallelism` for free; strings are hashed 8 bytes at a time by the index's
   own function, and the key group (`key_groups_of_rows`) is computed for new keys only;
2. an open-addressing table (linear probing, power-of-two size, at most 40% full
   counting tombstones; entries are (slot, hash) rows) maps hash → slot. The batch
   probes in vectorized *rounds* comparing hashes only: the first round looks at each
   probe's home entry, later ones at windows of 4, then 16 entries, until each probe
   met its hash (a candidate) or an empty entry (absent). The candidates are then
   compared exactly, all at once (`KeyColumnStore.equal`): a true 64-bit collision is a
   mismatch that probes on from the entry after it;
3. new keys are placed the same way: in each round every claimant of a free entry
   writes its slot and the one whose write stayed won it; the others probe on.

Removal leaves a tombstone (the entry keeps probe sequences intact); when live entries
plus tombstones pass `_MAX_LOAD` the table is rebuilt, larger if the live keys need it.
The loops here are over probe rounds, never over rows or keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.state.keycolumns import KeyColumnStore, RowKeys, denormalize_value
from runtime.state.keygroups import combine_column_hashes, key_groups_of_rows

_EMPTY = -1
_TOMBSTONE = -2
_MIN_BITS = 10
_WIDTHS = (1, 4, 16)  # entries a probe looks at in its first, second, later rounds
_STEPS = np.arange(max(_WIDTHS), dtype=np.int64)
# Live entries + tombstones, of the table size, before a rebuild; and at most this full
# right after one. 16 bytes an entry: 64 to 128 bytes of table per key.
_MAX_LOAD = 0.4
_REBUILD_LOAD = 0.25


class OpenAddressingTable:
    """hash → slot with linear probing (module docstring). The caller owns slot numbers;
    the table remembers each slot's position so removal is a vectorized write."""

    def __init__(self, bits: int = _MIN_BITS) -> None:
        self._reset(bits)
        self.pos_of = np.zeros(0, dtype=np.int64)  # table position per slot

    def _reset(self, bits: int) -> None:
        self.bits = bits
        self.shift = np.uint64(64 - bits)
        self.mask = (1 << bits) - 1
        # One row per entry: (slot, hash as int64). Interleaved, so a probe touches one
        # cache line per entry (`np.take` of rows: ~2x faster than two gathers).
        self.entries = np.zeros((1 << bits, 2), dtype=np.int64)
        self.entries[:, 0] = _EMPTY
        self.used = 0  # live entries + tombstones
        self.live = 0

    def _home(self, hashes: np.ndarray) -> np.ndarray:
        """First probe position: the hash's top bits (its low bits pick the key group)."""
        return (hashes >> self.shift).astype(np.int64)

    def probe(self, hashes: np.ndarray, equal: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """The slot of every probe's key, -1 where absent. `equal(probes, slots)` says
        whether each probe's key equals the stored key of the slot beside it.

        The rounds compare hashes only; the candidates (equal hash) are then compared
        exactly all at once, and only a probe whose candidate was a 64-bit collision
        goes round again, from the entry after it."""
        out = np.full(len(hashes), -1, dtype=np.int64)
        todo = np.arange(len(hashes), dtype=np.int64)
        start = self._home(hashes)
        while len(todo):  # more than once only after a true 64-bit collision
            cand_probe, cand_slot, cand_pos = self._scan(hashes[todo], start)
            probes = todo[cand_probe]
            ok = equal(probes, cand_slot)
            out[probes[ok]] = cand_slot[ok]
            todo, start = probes[~ok], (cand_pos[~ok] + 1) & self.mask
        return out

    def _scan(self, h: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Walk each probe from `pos` to its first entry with its hash (a candidate) or to
        an empty entry (absent). Returns the candidates' probe indices, slots, positions.

        The first round looks at one entry per probe (most stop there); later rounds look
        at windows of consecutive entries per probe (`_WIDTHS`), so a long cluster costs a
        round per window, not per entry."""
        idx = np.arange(len(h), dtype=np.int64)
        h = h.view(np.int64)
        # First round, one entry per probe (1-d arrays: the common case, kept cheap).
        entry = np.take(self.entries, pos, axis=0)
        slot = entry[:, 0]
        hit = (entry[:, 1] == h) & (slot >= 0)
        got_i, got_s, got_p = [idx[hit]], [slot[hit]], [pos[hit]]
        go_on = (slot != _EMPTY) & ~hit
        idx, pos, h = idx[go_on], (pos[go_on] + 1) & self.mask, h[go_on]
        rounds = 1
        while len(idx):  # loop over the later probe rounds: windows of entries
            width = _WIDTHS[min(rounds, len(_WIDTHS) - 1)]
            window = pos[:, None] + _STEPS[:width] & self.mask
            entries = np.take(self.entries, window, axis=0)  # (probes, width, 2)
            slots = entries[:, :, 0]
            hits = (entries[:, :, 1] == h[:, None]) & (slots >= 0)
            stop = hits | (slots == _EMPTY)
            first = stop.argmax(axis=1)
            rows = np.arange(len(idx))
            stopped = stop[rows, first]
            found = stopped & hits[rows, first]
            got_i.append(idx[found])
            got_s.append(slots[rows[found], first[found]])
            got_p.append(window[rows[found], first[found]])
            go_on = ~stopped
            idx, pos, h = idx[go_on], (pos[go_on] + width) & self.mask, h[go_on]
            rounds += 1
        return np.concatenate(got_i), np.concatenate(got_s), np.concatenate(got_p)

    def insert(self, hashes: np.ndarray, slots: np.ndarray) -> None:
        """Add keys known to be absent (distinct slots)."""
        m = len(slots)
        if m == 0:
            return
        if self.used + m > (1 << self.bits) * _MAX_LOAD:
            self._rebuild(self.live + m)
        self._grow_slots(int(slots.max()) + 1)
        self._place(hashes, slots)
        self.live += m

    def _place(self, hashes: np.ndarray, slots: np.ndarray) -> None:
        pos = self._home(hashes)
        idx = np.arange(len(slots), dtype=np.int64)
        width, rounds = _WIDTHS[0], 0
        while len(idx):  # loop over probe rounds (windows of entries, as in `_scan`)
            if width > 1:  # move each probe to the first free entry of its window
                window = pos[:, None] + _STEPS[:width] & self.mask
                free = self.entries[window, 0] < 0
                pos = np.where(free.any(axis=1), window[np.arange(len(idx)), free.argmax(axis=1)], pos)
            current = self.entries[pos, 0]
            claim = np.flatnonzero(current < 0)
            won = np.zeros(len(idx), dtype=bool)
            if len(claim):
                # Every claimant writes its slot; the one whose write stayed won the entry
                # (which one does not matter: positions never decide slot numbers).
                cp, cs = pos[claim], slots[idx[claim]]
                self.entries[cp, 0] = cs
                winners = claim[self.entries[cp, 0] == cs]
                wp, wi = pos[winners], idx[winners]
                self.used += int((current[winners] == _EMPTY).sum())
                self.entries[wp, 1] = hashes[wi].view(np.int64)
                self.pos_of[slots[wi]] = wp
                won[winners] = True
            lost = ~won
            # A window without a free entry: move past it; a lost claim: the next entry.
            idx, pos = idx[lost], (pos[lost] + np.where(current[lost] < 0, 1, width)) & self.mask
            rounds += 1
            width = _WIDTHS[min(rounds, len(_WIDTHS) - 1)]

    def remove(self, slots: np.ndarray) -> None:
        """Drop these (live, distinct) slots' entries, leaving tombstones."""
        if len(slots):
            self.entries[self.pos_of[slots], 0] = _TOMBSTONE
            self.live -= len(slots)

    def _rebuild(self, live_after: int) -> None:
        """A fresh table without tombstones, sized for `live_after` keys (`_REBUILD_LOAD`)."""
        live_pos = np.flatnonzero(self.entries[:, 0] >= 0)
        slots = self.entries[live_pos, 0]
        hashes = self.entries[live_pos, 1].view(np.uint64)
        bits = max(_MIN_BITS, self.bits)
        while live_after > (1 << bits) * _REBUILD_LOAD:
            bits += 1
        self._reset(bits)
        self.live = len(slots)
        self._place(hashes, slots)

    def _grow_slots(self, n: int) -> None:
        if n > len(self.pos_of):
            size = max(n, 2 * len(self.pos_of), 16)
            self.pos_of = np.concatenate([self.pos_of, np.zeros(size - len(self.pos_of), dtype=np.int64)])

    def nbytes(self) -> int:
        return int(self.entries.nbytes + self.pos_of.nbytes)


def probe_hash(key_hashes: np.ndarray) -> np.ndarray:
    """The hash the table probes with: the key hash itself. (A seam for tests, which
    weaken it to force 64-bit collisions and so exercise the exact comparison.)"""
    return key_hashes


class BatchKeys:
    """A batch's key columns prepared for the index: canonical columns and row hashes.

    The *probe units* are the rows, except for a single key column grouped in Python
    (nested types, `RowKeys.codes`): then they are its distinct values (`unit_of_row`),
    so the slow path compares each distinct value once."""

    def __init__(self, keys: Sequence[pa.Array | pa.ChunkedArray], num_rows: int) -> None:
        self.num_rows = num_rows
        self.keys = keys
        self.columns = [RowKeys(c) for c in keys]
        # The row hash is keygroups.hash_rows itself unless a column is hashed the index's
        # own way (strings): then key groups are computed for new keys only.
        self.exact = all(c.exact for c in self.columns)
        single = self.columns[0] if len(self.columns) == 1 else None
        if single is not None and single.codes is not None:
            self.unit_of_row: np.ndarray | None = single.codes
            self.units = len(single.valid)
            # One row of each unit (any row will do: they all hold the same value).
            self.unit_rows = np.zeros(self.units, dtype=np.int64)
            self.unit_rows[single.codes] = np.arange(num_rows, dtype=np.int64)
            self.key_hashes = combine_column_hashes([single.hash[self.unit_rows]], self.units)
        else:
            self.unit_of_row = None
            self.units = num_rows
            self.unit_rows = np.arange(num_rows, dtype=np.int64)
            self.key_hashes = combine_column_hashes([c.hash for c in self.columns], num_rows)
        self.hashes = probe_hash(self.key_hashes)

    def key_groups(self, units: np.ndarray, max_parallelism: int, columns: Sequence[int] | None = None) -> np.ndarray:
        """`keygroups.key_groups_of_rows` of these units' keys (what the exchange routes by),
        over the key columns at `columns` only when given (`group_key_columns`)."""
        if self.exact and columns is None:
            return (self.key_hashes[units] % np.uint64(max_parallelism)).astype(np.int32)
        take = pa.array(self.unit_rows[units], type=pa.int64())
        keys = self.keys if columns is None else [self.keys[i] for i in columns]
        return key_groups_of_rows([k.take(take) for k in keys], len(units), max_parallelism)

    def per_row(self, unit_values: np.ndarray) -> np.ndarray:
        return unit_values if self.unit_of_row is None else unit_values[self.unit_of_row]


class KeyIndex:
    """Columnar key store + open-addressing table: `find` / `add` / `drop` whole batches.

    The column kinds and types are fixed by the first batch (or restored keys) seen."""

    def __init__(self) -> None:
        self.table = OpenAddressingTable()
        self.stores: list[KeyColumnStore] | None = None

    def ensure_stores(self, keys: BatchKeys) -> None:
        if self.stores is None:
            self.stores = [KeyColumnStore(c.kind, c.type) for c in keys.columns]
        elif len(self.stores) != len(keys.columns):
            raise ValueError(f"key with {len(keys.columns)} columns, the state's keys have {len(self.stores)}")
        else:
            for store, col in zip(self.stores, keys.columns, strict=True):
                if store.kind != col.kind and col.kind != "null":
                    raise ValueError(f"key column of type {col.type} does not match the state's key type {store.type}")

    def same_keys(self, keys: BatchKeys, units: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Whether each unit's key equals the stored key of the slot beside it (exact)."""
        rows = keys.unit_rows[units]
        same = np.ones(len(units), dtype=bool)
        assert self.stores is not None
        for store, col in zip(self.stores, keys.columns, strict=True):
            if col.kind == "null" and store.kind != "null":
                same &= ~store.valid[slots]
            else:
                same &= store.equal(slots, col, col.entries_of(rows))
        return same

    def find(self, keys: BatchKeys, units: np.ndarray | None = None) -> np.ndarray:
        """Slot of each probe unit (all units, or these), -1 where absent."""
        units = np.arange(keys.units, dtype=np.int64) if units is None else units
        if self.table.live == 0:
            return np.full(len(units), -1, dtype=np.int64)
        return self.table.probe(keys.hashes[units], lambda u, s: self.same_keys(keys, units[u], s))

    def add(self, keys: BatchKeys, units: np.ndarray, slots: np.ndarray) -> None:
        """Store the keys of these (absent, pairwise distinct) units at these slots."""
        assert self.stores is not None
        rows = keys.unit_rows[units]
        for store, col in zip(self.stores, keys.columns, strict=True):
            if col.kind == "null" and store.kind != "null":
                store.put_nulls(slots)
            else:
                store.put(slots, col, rows)
        self.table.insert(keys.hashes[units], slots)

    def drop(self, slots: np.ndarray, live_after: Callable[[], np.ndarray]) -> None:
        """Forget these live, distinct slots (`live_after()`: the slots still live, asked
        for only when a byte heap is worth compacting)."""
        self.table.remove(slots)
        for store in self.stores or []:
            store.release(slots)
            if store.needs_compaction():
                store.compact(live_after())

    def add_values(self, slots: np.ndarray, keys: Sequence[tuple[Any, ...]]) -> None:
        """Store keys given as Python tuples (a restored snapshot's, normalised) at these
        slots; the stores must exist (their types come from a batch)."""
        assert self.stores is not None
        if not len(slots):
            return
        arrays = [
            pa.array([denormalize_value(k[j]) for k in keys], type=store.type) for j, store in enumerate(self.stores)
        ]
        cols = [RowKeys(a) for a in arrays]
        rows = np.arange(len(slots), dtype=np.int64)
        for store, col in zip(self.stores, cols, strict=True):
            store.put(slots, col, rows)
        self.table.insert(probe_hash(combine_column_hashes([c.hash for c in cols], len(slots))), slots)
