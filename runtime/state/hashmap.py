"""In-memory keyed state (`state.backend.type` = `hashmap`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend, encode_rows
from runtime.state.keygroups import key_groups_of_rows


def _normalize(v: Any) -> Any:
    """Dict-safe key value (NaN never equals itself; lists are unhashable)."""
    if isinstance(v, float) and v != v:
        return ("__nan__",)
    if isinstance(v, list):
        return tuple(_normalize(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _normalize(x)) for k, x in v.items()))
    return v


def distinct_keys(
    keys: Sequence[pa.Array], num_rows: int, max_parallelism: int = DEFAULT_MAX_PARALLELISM
) -> tuple[np.ndarray, list[tuple[Any, ...]], np.ndarray]:
    """The batch's distinct keys as dict-safe tuples, each row's index into them, and
    each distinct key's key group (`keygroups.key_groups_of_rows`, the function the hash
    exchange routes by).

    Both backends look keys up once per distinct key of a batch (the loop over distinct
    keys is theirs); the grouping itself is vectorized (`encode_rows`). No rows, no keys."""
    inverse, first = encode_rows(keys, num_rows)
    if len(first) == 0:
        return inverse, [], np.zeros(0, dtype=np.int32)
    if not keys:
        return inverse, [()], np.zeros(1, dtype=np.int32)
    taken = [k.take(pa.array(first)) for k in keys]
    groups = key_groups_of_rows(taken, len(first), max_parallelism)
    cols = [k.to_pylist() for k in taken]
    return inverse, [tuple(_normalize(v) for v in row) for row in zip(*cols, strict=True)], groups


class HashMapStateBackend(KeyedStateBackend):
    """A Python dict from key tuple to slot.

    `lookup` groups the batch by key vectorized (`encode_rows`) and then does one dict
    look-up per *distinct key of the batch* (the only Python loop: over distinct keys,
    never over rows).
    """

    def __init__(self, max_parallelism: int = DEFAULT_MAX_PARALLELISM) -> None:
        self.max_parallelism = max_parallelism
        self._index: dict[tuple[Any, ...], int] = {}
        self._keys: list[tuple[Any, ...] | None] = []
        self._groups = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self._seq = np.zeros(0, dtype=np.int64)  # insertion sequence, for ordered scans
        self._next_seq = 0
        self._free: list[int] = []

    # ------------------------------------------------------------------ lookup
    def lookup(self, keys: Sequence[pa.Array], num_rows: int, create: bool = True) -> np.ndarray:
        inverse, distinct, groups = distinct_keys(keys, num_rows, self.max_parallelism)
        if not distinct:
            return np.zeros(0, dtype=np.int64)
        slots = np.empty(len(distinct), dtype=np.int64)
        for i, key in enumerate(distinct):  # loop over distinct keys of the batch
            s = self._index.get(key)
            if s is None:
                s = self._insert(key, int(groups[i])) if create else -1
            slots[i] = s
        return slots[inverse]

    def _insert(self, key: tuple[Any, ...], group: int) -> int:
        if self._free:
            s = self._free.pop()
        else:
            s = len(self._keys)
            self._keys.append(None)
            if s >= len(self._live):
                n = max(16, 2 * len(self._live))
                self._live = np.concatenate([self._live, np.zeros(n - len(self._live), dtype=bool)])
                self._groups = np.concatenate([self._groups, np.zeros(n - len(self._groups), dtype=np.int32)])
                self._seq = np.concatenate([self._seq, np.zeros(n - len(self._seq), dtype=np.int64)])
        self._index[key] = s
        self._keys[s] = key
        self._live[s] = True
        self._groups[s] = group
        self._seq[s] = self._next_seq
        self._next_seq += 1
        return s

    # ------------------------------------------------------------------ removal / queries
    def remove(self, slots: np.ndarray) -> None:
        for s in np.unique(np.asarray(slots, dtype=np.int64)).tolist():
            if s < 0 or not self._live[s]:
                continue
            key = self._keys[s]
            self._index.pop(key, None)  # type: ignore[arg-type]
            self._keys[s] = None
            self._live[s] = False
            self._free.append(s)

    def contains(self, slots: np.ndarray) -> np.ndarray:
        slots = np.asarray(slots, dtype=np.int64)
        ok = (slots >= 0) & (slots < len(self._keys))
        out = np.zeros(len(slots), dtype=bool)
        out[ok] = self._live[slots[ok]]
        return out

    def key_groups(self, slots: np.ndarray) -> np.ndarray:
        return self._groups[np.asarray(slots, dtype=np.int64)]

    def keys_of(self, slots: np.ndarray) -> list[tuple[Any, ...]]:
        return [self._keys[s] for s in np.asarray(slots, dtype=np.int64).tolist()]  # type: ignore[misc]

    def live_slots(self) -> np.ndarray:
        live = np.flatnonzero(self._live[: len(self._keys)])
        return live[np.argsort(self._seq[live], kind="stable")]

    @property
    def capacity(self) -> int:
        return len(self._keys)

    def __len__(self) -> int:
        return len(self._index)

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        live = self.live_slots()
        return {
            "max_parallelism": self.max_parallelism,
            "slots": live.tolist(),
            "keys": [self._keys[s] for s in live.tolist()],
            "key_groups": self._groups[live].tolist(),
        }

    def restore(self, snap: dict[str, Any], key_group_range: tuple[int, int] | None = None) -> None:
        """Restore the same slot numbers (operators' value arrays are indexed by them).
        With a key-group range (rescaling), keys outside it are skipped."""
        self.__init__(snap.get("max_parallelism", self.max_parallelism))  # type: ignore[misc]
        slots, keys, groups = snap["slots"], snap["keys"], snap["key_groups"]
        top = max(slots, default=-1) + 1
        self._keys = [None] * top
        self._live = np.zeros(max(top, 16), dtype=bool)
        self._groups = np.zeros(max(top, 16), dtype=np.int32)
        self._seq = np.zeros(max(top, 16), dtype=np.int64)
        for s, k, g in zip(slots, keys, groups, strict=True):
            if key_group_range is not None and not (key_group_range[0] <= g <= key_group_range[1]):
                continue
            k = tuple(k)
            self._index[k] = s
            self._keys[s] = k
            self._live[s] = True
            self._groups[s] = g
            self._seq[s] = self._next_seq
            self._next_seq += 1
        self._free = [s for s in range(top) if not self._live[s]]
