"""Per-side state of the regular (non-windowed) join: a multiset of rows, columnar.

Flink keeps, per join side and join key, a `MapState<row, (count, numOfAssociations)>`.
Here one side is:

- a row index (a `KeyedStateBackend` keyed on *all* data columns): row → row slot, so a
  retraction finds the stored copy of its row and equal rows share one slot with a count;
- numpy arrays indexed by row slot: `count` (copies), `key` (the join-key slot from the
  join's shared key backend, -1 = a NULL key that can never match), `assoc` (how many
  other-side rows it currently joins with; outer sides and the semi/anti left side use it)
  and `pos` (where the row's values are stored);
- the stored values: columnar chunks appended as new distinct rows arrive, taken by `pos`.
  Dead rows leave garbage that `compact()` drops once it outweighs the live rows.

Probing is vectorized: the live slots are sorted by key slot once per state change (cached)
and a batch of probe keys finds its candidate ranges with `np.searchsorted`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.operators._common import conform
from runtime.state import KeyedStateBackend


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a), 16), dtype=a.dtype)
    out[: len(a)] = a
    return out


class JoinSide:
    """One input's rows of a regular join (see the module docstring)."""

    def __init__(self, rows: KeyedStateBackend, arrow_types: list[pa.DataType] | None) -> None:
        self.rows = rows
        self.types = arrow_types
        self.count = np.zeros(0, dtype=np.int64)
        self.key = np.zeros(0, dtype=np.int64)
        self.assoc = np.zeros(0, dtype=np.int64)
        self.pos = np.zeros(0, dtype=np.int64)
        self.chunks: list[list[pa.Array]] = []
        self.stored = 0
        self.version = 0
        self._index: tuple[int, np.ndarray, np.ndarray] | None = None
        self._columns: tuple[int, list[pa.Array]] | None = None
        # An insert-only input never retracts: every row gets a fresh slot, no row hashing.
        self.append_only = False
        self._next_slot = 0

    # ------------------------------------------------------------------ reading
    def live(self) -> np.ndarray:
        return np.flatnonzero(self.count > 0)

    def total(self) -> int:
        return int(self.count.sum())

    def sorted_by_key(self) -> tuple[np.ndarray, np.ndarray]:
        """(live slots that can match, ordered by key slot; their key slots)."""
        if self._index is None or self._index[0] != self.version:
            live = self.live()
            live = live[self.key[live] >= 0]
            order = np.argsort(self.key[live], kind="stable")
            slots = live[order]
            self._index = (self.version, slots, self.key[slots])
        return self._index[1], self._index[2]

    def columns(self) -> list[pa.Array]:
        """The stored values, one array per column (concatenated lazily, cached)."""
        if self._columns is None or self._columns[0] != self.stored:
            if not self.chunks:
                assert self.types is not None
                cols = [pa.array([], type=t) for t in self.types]
            else:
                cols = [pa.concat_arrays([c[i] for c in self.chunks]) for i in range(len(self.chunks[0]))]
                self.chunks = [cols]
            self._columns = (self.stored, cols)
        return self._columns[1]

    def take(self, slots: np.ndarray) -> list[pa.Array]:
        """Values of these row slots; slot -1 gives a NULL row (null padding)."""
        cols = self.columns()
        null = slots < 0
        positions = self.pos[np.where(null, 0, slots)] if len(self.pos) else np.zeros(len(slots), dtype=np.int64)
        idx = pa.array(positions, mask=null, type=pa.int64())
        return [c.take(idx) for c in cols]

    # ------------------------------------------------------------------ writing
    def apply(self, data: pa.RecordBatch, signs: np.ndarray, key_slots: np.ndarray, matches: np.ndarray | None) -> None:
        """Fold a batch into the multiset: +1 / -1 copies per row. New rows get their key
        slot and (when `matches` is given) their association count."""
        n = data.num_rows
        if n == 0:
            return
        if self.types is None:
            self.types = [c.type for c in data.columns]
        if self.append_only:
            slots = np.arange(self._next_slot, self._next_slot + n, dtype=np.int64)
            self._next_slot += n
            cap = self._next_slot
        else:
            slots = self.rows.lookup(list(data.columns), n, create=True)
            cap = self.rows.capacity
        self.count = _grow(self.count, cap)
        self.key = _grow(self.key, cap)
        self.assoc = _grow(self.assoc, cap)
        self.pos = _grow(self.pos, cap)
        uniq, first = np.unique(slots, return_index=True)
        new = self.count[uniq] <= 0
        if new.any():
            new_slots, rows = uniq[new], first[new]
            take = pa.array(rows, type=pa.int64())
            cols = [conform(data.column(i).take(take), self.types[i]) for i in range(data.num_columns)]
            self.chunks.append(cols)
            self.pos[new_slots] = np.arange(self.stored, self.stored + len(rows), dtype=np.int64)
            self.stored += len(rows)
            self.count[new_slots] = 0
            self.key[new_slots] = key_slots[rows]
            self.assoc[new_slots] = matches[rows] if matches is not None else 0
        np.add.at(self.count, slots, signs)
        dead = uniq[self.count[uniq] <= 0]
        if len(dead):
            self.count[dead] = 0
            self.assoc[dead] = 0
            if not self.append_only:
                self.rows.remove(dead)
        self.version += 1
        if len(self.chunks) > 32 or self.stored > 2 * (int((self.count > 0).sum()) + 512):
            self.compact()

    def compact(self) -> None:
        """Drop the values of dead rows (and merge chunks)."""
        live = self.live()
        cols = self.take(live)
        self.chunks = [cols] if cols else []
        self.pos[live] = np.arange(len(live), dtype=np.int64)
        self.stored = len(live)
        self._columns = None

    # ------------------------------------------------------------------ checkpoints
    def snapshot(self) -> dict[str, Any]:
        cols = self.columns() if (self.chunks or self.types) else []
        return {
            "rows": self.rows.snapshot(),
            "types": self.types,
            "count": self.count,
            "key": self.key,
            "assoc": self.assoc,
            "pos": self.pos,
            "columns": cols,
            "stored": self.stored,
            "append_only": self.append_only,
            "next_slot": self._next_slot,
        }

    def restore(self, d: dict[str, Any]) -> None:
        self.rows.restore(d["rows"])
        self.types = d["types"]
        self.count, self.key, self.assoc, self.pos = d["count"], d["key"], d["assoc"], d["pos"]
        self.chunks = [d["columns"]] if d["columns"] else []
        self.stored = d["stored"]
        self.append_only = d.get("append_only", False)
        self._next_slot = d.get("next_slot", 0)
        self.version += 1
        self._index = None
        self._columns = None


def candidate_pairs(probe_keys: np.ndarray, other: JoinSide) -> tuple[np.ndarray, np.ndarray]:
    """All (probe row, other row slot) pairs with equal key slots (probe key -1 matches
    nothing). Pairs come ordered by probe row, then by the other side's slot order."""
    slots, keys = other.sorted_by_key()
    n = len(probe_keys)
    if n == 0 or len(slots) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    start = np.searchsorted(keys, probe_keys, side="left")
    end = np.searchsorted(keys, probe_keys, side="right")
    lens = np.where(probe_keys >= 0, end - start, 0).astype(np.int64)
    total = int(lens.sum())
    probe = np.repeat(np.arange(n, dtype=np.int64), lens)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    other_slots = slots[np.repeat(start, lens) + within]
    return probe, other_slots


def transitions(other_slots: np.ndarray, deltas: np.ndarray, assoc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Association-count transitions of the other side's rows over a batch of pairs (in
    pair order): (became matched, 0 → 1 on this pair; became unmatched, 1 → 0 on this
    pair). Vectorized: a running sum per slot (stable sort by slot, then cumsum)."""
    m = len(other_slots)
    if m == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    order = np.argsort(other_slots, kind="stable")
    s_sorted = other_slots[order]
    d_sorted = deltas[order]
    cum = np.cumsum(d_sorted)
    starts = np.ones(m, dtype=bool)
    starts[1:] = s_sorted[1:] != s_sorted[:-1]
    group_start_idx = np.maximum.accumulate(np.where(starts, np.arange(m), 0))
    before_group = cum[group_start_idx] - d_sorted[group_start_idx]
    prior_sorted = assoc[s_sorted] + (cum - d_sorted - before_group)
    after_sorted = prior_sorted + d_sorted
    up = np.zeros(m, dtype=bool)
    down = np.zeros(m, dtype=bool)
    up[order] = (prior_sorted <= 0) & (after_sorted > 0)
    down[order] = (prior_sorted > 0) & (after_sorted <= 0)
    return up, down
