"""Per-side state of the regular (non-windowed) join: a multiset of rows, columnar.

Flink keeps, per join side and join key, a `MapState<row, (count, numOfAssociations)>`.
Here one side is:

- a row index (a `KeyedStateBackend` keyed on *all* data columns): row → row slot, so a
  retraction finds the stored copy of its row and equal rows share one slot with a count;
- numpy arrays indexed by row slot: `count` (copies), `key` (the join-key slot from the
  join's shared key backend, -1 = a NULL key that can never match), `assoc` (how many
  other-side rows it currently joins with; outer sides and the semi/anti left side use it)
  and `pos` (where the row's values are stored);
- the stored values: columnar chunks appended as new distinct rows arrive, taken by `pos`
  (runtime/operators/row_chunks.py: O(log n) chunks, gathered without concatenating them).
  Dead rows leave garbage that `compact()` drops once it outweighs the live rows.

State TTL (runtime/state/ttl.py): `ttl` holds each row slot's last-write time (a row is
written when copies are added / retracted and, on an outer side, when its association
count changes, as Flink's per-entry MapState TTL); `expire(now)` drops rows not written
for the TTL, silently.

Probing is vectorized: the live slots are kept sorted by key slot in a few runs
(runtime/operators/join_index.py, updated per batch without re-sorting the side) and a batch
of probe keys finds its candidate ranges with `np.searchsorted`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.distinct import sorted_distinct_first
from runtime.operators._common import conform
from runtime.operators.join_index import KeyRuns
from runtime.operators.row_chunks import ChunkedColumns
from runtime.state import KeyedStateBackend
from runtime.state.ttl import StateTtl, state_bytes


def _grow(a: np.ndarray, n: int) -> np.ndarray:
    if len(a) >= n:
        return a
    out = np.zeros(max(n, 2 * len(a), 16), dtype=a.dtype)
    out[: len(a)] = a
    return out


class JoinSide:
    """One input's rows of a regular join (see the module docstring)."""

    def __init__(self, rows: KeyedStateBackend, arrow_types: list[pa.DataType] | None, ttl_ms: int = 0) -> None:
        self.rows = rows
        self.ttl_ms = ttl_ms
        self.ttl = StateTtl(ttl_ms)
        self.types = arrow_types
        self.count = np.zeros(0, dtype=np.int64)
        self.key = np.zeros(0, dtype=np.int64)
        self.assoc = np.zeros(0, dtype=np.int64)
        self.pos = np.zeros(0, dtype=np.int64)
        self.values = ChunkedColumns(arrow_types)
        self.version = 0
        self._index: tuple[int, KeyRuns] | None = None
        # An insert-only input never retracts: every row gets a fresh slot, no row hashing.
        self.append_only = False
        self._next_slot = 0

    # ------------------------------------------------------------------ reading
    def live(self) -> np.ndarray:
        return np.flatnonzero(self.count > 0)

    def total(self) -> int:
        return int(self.count.sum())

    def index(self) -> KeyRuns:
        """The by-key index of the live rows that can match (join_index.py), rebuilt
        only when `apply` could not keep it current."""
        if self._index is None or self._index[0] != self.version:
            live = self.live()
            live = live[self.key[live] >= 0]
            self._index = (self.version, KeyRuns.build(live, self.key[live]))
        return self._index[1]

    def _update_index(self, added: np.ndarray, dead: np.ndarray) -> None:
        """Keep the index current after `apply`: drop the dead rows, add the new ones as a
        run (or let `index()` rebuild it when a new slot is not above the indexed ones)."""
        assert self._index is not None
        runs = self._index[1]
        added = added[self.key[added] >= 0]
        if not runs.can_add(added):
            self._index = None
            return
        if len(dead):
            runs.keep(self.count > 0)
        runs.add(added, self.key[added])
        self._index = (self.version, runs)

    @property
    def stored(self) -> int:
        """Rows in the value store (live and dead)."""
        return self.values.num_rows

    def columns(self) -> list[pa.Array]:
        """The stored values, one array per column (merges the store's chunks)."""
        if self.values.types is None and self.types is not None:
            self.values.types = self.types
        return self.values.columns()

    def take(self, slots: np.ndarray) -> list[pa.Array]:
        """Values of these row slots; slot -1 gives a NULL row (null padding)."""
        if self.values.types is None and self.types is not None:
            self.values.types = self.types
        null = slots < 0
        positions = self.pos[np.where(null, 0, slots)] if len(self.pos) else np.zeros(len(slots), dtype=np.int64)
        return self.values.take(positions, null)

    # ------------------------------------------------------------------ writing
    def apply(
        self,
        data: pa.RecordBatch,
        signs: np.ndarray,
        key_slots: np.ndarray,
        matches: np.ndarray | None,
        now: int = 0,
    ) -> None:
        """Fold a batch into the multiset: +1 / -1 copies per row. New rows get their key
        slot and (when `matches` is given) their association count; rows still alive are
        written at `now` (state TTL)."""
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
        indexed = self._index is not None and self._index[0] == self.version
        if self.append_only:  # fresh, distinct slots
            uniq, first = slots, np.arange(n, dtype=np.int64)
        else:
            uniq, first = sorted_distinct_first(slots)
        new = self.count[uniq] <= 0
        new_slots = uniq[new]
        if len(new_slots):
            rows = first[new]
            take = pa.array(rows, type=pa.int64())
            cols = [conform(data.column(i).take(take), self.types[i]) for i in range(data.num_columns)]
            start = self.values.append(cols)
            self.pos[new_slots] = np.arange(start, start + len(rows), dtype=np.int64)
            self.count[new_slots] = 0
            self.key[new_slots] = key_slots[rows]
            self.assoc[new_slots] = matches[rows] if matches is not None else 0
        if self.append_only:
            self.count[slots] += signs
        else:
            np.add.at(self.count, slots, signs)
        alive = self.count[uniq] > 0
        dead = uniq[~alive]
        self.ttl.touch(uniq[alive], now)
        if len(dead):
            self._drop(dead)
            self.ttl.forget(dead)
        self.version += 1
        if indexed:
            self._update_index(new_slots[self.count[new_slots] > 0], dead)
        if self.stored > 2 * (int((self.count > 0).sum()) + 512):
            self.compact()

    def _drop(self, dead: np.ndarray) -> None:
        self.count[dead] = 0
        self.assoc[dead] = 0
        if not self.append_only:
            self.rows.remove(dead)

    def expire(self, now: int) -> np.ndarray:
        """Drop the rows not written for the TTL; returns their slots (to free key slots)."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[slots < len(self.count)]
            slots = slots[self.count[slots] > 0]
        if len(slots):
            self._drop(slots)
            self.version += 1
        return slots

    def state_bytes(self) -> int:
        """Approximate bytes of this side's state (metrics)."""
        return state_bytes(self.count, self.key, self.assoc, self.pos, self.values.chunks, self.ttl.last)

    def compact(self) -> None:
        """Drop the values of dead rows (and merge chunks)."""
        live = self.live()
        cols = self.take(live)
        self.values.replace(cols)
        self.pos[live] = np.arange(len(live), dtype=np.int64)

    # ------------------------------------------------------------------ checkpoints
    def snapshot(self) -> dict[str, Any]:
        cols = self.columns() if (self.values.chunks or self.types) else []
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
            "ttl": self.ttl,
        }

    def restore(self, d: dict[str, Any]) -> None:
        self.rows.restore(d["rows"])
        self.types = d["types"]
        self.count, self.key, self.assoc, self.pos = d["count"], d["key"], d["assoc"], d["pos"]
        self.values = ChunkedColumns(self.types)
        self.values.replace(list(d["columns"] or []))
        self.append_only = d.get("append_only", False)
        self._next_slot = d.get("next_slot", 0)
        self.ttl = d.get("ttl") or StateTtl(self.ttl_ms)
        self.ttl.reconfigure(self.ttl_ms)
        self.version += 1
        self._index = None


def candidate_pairs(probe_keys: np.ndarray, other: JoinSide) -> tuple[np.ndarray, np.ndarray]:
    """All (probe row, other row slot) pairs with equal key slots (probe key -1 matches
    nothing). Pairs come ordered by probe row, then by the other side's slot order."""
    return other.index().pairs(probe_keys)


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
