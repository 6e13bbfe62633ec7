"""The regular join's by-key index of one side's live rows, as a few sorted runs.

A probe batch finds its candidate rows of the other side with `np.searchsorted` over the
live row slots sorted by join-key slot. Re-sorting every live row after each batch (an
argsort of the whole side) and even inserting each batch's rows into one sorted array
(`np.insert`, a copy of the whole index) cost O(side) per batch: with a million stored
rows that was most of Nexmark q23's time. `KeyRuns` keeps the index as sorted runs
instead, like an LSM tree: a batch's new rows become a run of their own and `FANOUT`
runs of one level are merged into one run of the next level, so there are O(log n) runs
and each entry is re-sorted O(log n) times in total. A probe searches every run and
merges the pairs back into (probe row, slot) order.

Runs only take slots above all indexed ones (always true for an insert-only side, whose
slots are fresh), so runs in list order hold increasing slot ranges and the pair order is
exactly what one sorted array would give. Otherwise the owner rebuilds the index from
scratch (`KeyRuns.build`).
"""

from __future__ import annotations

import numpy as np

FANOUT = 4


def _sorted_run(slots: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((slots, keys))
    return slots[order], keys[order]


class KeyRuns:
    """Live row slots with a join key, in sorted runs (see the module docstring)."""

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []
        self.levels: list[int] = []
        self.max_slot = -1

    @classmethod
    def build(cls, slots: np.ndarray, keys: np.ndarray) -> KeyRuns:
        """One run of these (live, keyed) slots."""
        index = cls()
        if len(slots):
            index.runs = [_sorted_run(slots, keys)]
            index.levels = [0]
            index.max_slot = int(slots.max())
        return index

    def can_add(self, slots: np.ndarray) -> bool:
        """Whether `add` keeps the order: every new slot is above the indexed ones."""
        return len(slots) == 0 or int(slots.min()) > self.max_slot

    def add(self, slots: np.ndarray, keys: np.ndarray) -> None:
        """Index new slots (all above the indexed ones: `can_add`)."""
        if len(slots) == 0:
            return
        self.runs.append(_sorted_run(slots, keys))
        self.levels.append(0)
        self.max_slot = max(self.max_slot, int(slots.max()))
        while len(self.levels) >= FANOUT and len(set(self.levels[-FANOUT:])) == 1:
            group = self.runs[-FANOUT:]
            level = self.levels[-1] + 1
            merged_slots = np.concatenate([r[0] for r in group])
            merged_keys = np.concatenate([r[1] for r in group])
            # runs are in slot order, so a stable sort by key gives (key, slot) order
            order = np.argsort(merged_keys, kind="stable")
            del self.runs[-FANOUT:], self.levels[-FANOUT:]
            self.runs.append((merged_slots[order], merged_keys[order]))
            self.levels.append(level)

    def keep(self, alive: np.ndarray) -> None:
        """Drop the slots whose `alive[slot]` is False (rows that died)."""
        runs, levels = [], []
        for (slots, keys), level in zip(self.runs, self.levels, strict=True):  # O(log n) runs
            ok = alive[slots]
            if not ok.all():
                slots, keys = slots[ok], keys[ok]
            if len(slots):
                runs.append((slots, keys))
                levels.append(level)
        self.runs, self.levels = runs, levels

    def __len__(self) -> int:
        return sum(len(r[0]) for r in self.runs)

    def pairs(self, probe_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All (probe row, slot) pairs with equal key slots (probe key -1 matches
        nothing), ordered by probe row, then slot."""
        probes, others = [], []
        for slots, keys in self.runs:  # O(log n) runs
            p, s = _run_pairs(probe_keys, slots, keys)
            if len(p):
                probes.append(p)
                others.append(s)
        if not probes:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(probes) == 1:
            return probes[0], others[0]
        probe, other = np.concatenate(probes), np.concatenate(others)
        order = np.argsort(probe, kind="stable")  # runs are in slot order: ties keep it
        return probe[order], other[order]


def _run_pairs(probe_keys: np.ndarray, slots: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(probe_keys)
    if n == 0 or len(slots) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    start = np.searchsorted(keys, probe_keys, side="left")
    end = np.searchsorted(keys, probe_keys, side="right")
    lens = np.where(probe_keys >= 0, end - start, 0).astype(np.int64)
    total = int(lens.sum())
    probe = np.repeat(np.arange(n, dtype=np.int64), lens)
    within = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
    return probe, slots[np.repeat(start, lens) + within]
