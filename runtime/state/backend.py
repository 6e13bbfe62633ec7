"""The KeyedStateBackend interface shared by the in-memory and RocksDB backends.

Design: a backend maps composite keys (given as Arrow arrays, one per key column) to
dense integer *slots*. Operators keep the per-key values themselves in columnar
arrays indexed by slot (numpy / object arrays), so folding a batch into state is a
vectorized scatter (`np.add.at`, element-wise min, ...), not a Python call per row.
The backend also records each key's key group, so a snapshot can be split by key-group
range and restored with another parallelism.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.config.core import MAX_PARALLELISM

# The declared default of `pipeline.max-parallelism` (runtime/config/core.py).
DEFAULT_MAX_PARALLELISM: int = MAX_PARALLELISM.get(None)


def encode_rows(keys: Sequence[pa.Array], num_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Group rows by their composite key (NULL is a value of its own).

    Returns `(inverse, first)`: `inverse[i]` is the dense group id of row i, ordered by
    first appearance, and `first[g]` the index of the first row of group g. Vectorized:
    each column is dictionary-encoded, the codes are combined into one int64 (re-densified
    after every column so the product never overflows), then `np.unique`.
    """
    if num_rows == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    combined = np.zeros(num_rows, dtype=np.int64)
    for col in keys:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if pa.types.is_null(col.type):
            continue
        enc = pc.dictionary_encode(col, null_encoding="encode")
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        card = len(enc.dictionary) + 1
        combined = combined * card + codes
        _, combined = np.unique(combined, return_inverse=True)
        combined = combined.astype(np.int64, copy=False).reshape(-1)
    uniq, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    # Re-number groups by first appearance so outputs follow arrival order.
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[order] = np.arange(len(uniq), dtype=np.int64)
    return rank[inverse], first[order]


class KeyedStateBackend(ABC):
    """Maps composite keys to dense slots and remembers each slot's key and key group.

    Slots of removed keys are reused. Values are stored by the operators in arrays
    indexed by slot; `capacity` tells them how long those arrays must be.
    """

    max_parallelism: int = DEFAULT_MAX_PARALLELISM
    # Which of the key columns given to `lookup` decide a key's key group (None: all).
    # The key group must be that of the columns the hash exchange routes by: a window
    # operator keys its state by (window_start, window_end, *group keys) but rows reach
    # it by the group keys alone, so it sets the group keys' positions here.
    group_key_columns: Sequence[int] | None = None
    # Whether the operators' per-slot values are written into the backend at every
    # checkpoint (`write_values`, rocksdb): the generic snapshot then takes the backend's
    # own checkpoint (runtime/operators/slot_state.py).
    stores_values: bool = False
    # Whether a slot `lookup` returned stays its key's until the operator removes the key,
    # and looking a key up again changes nothing: the operator may then cache key -> slot
    # itself (runtime/operators/window_slots.py). Not rocksdb: its lookup marks slots dirty.
    stable_slots: bool = False

    @abstractmethod
    def lookup(self, keys: Sequence[pa.Array], num_rows: int, create: bool = True) -> np.ndarray:
        """Slot of every row's key (int64); -1 for keys not in state when `create` is False."""

    @abstractmethod
    def remove(self, slots: np.ndarray) -> None:
        """Forget these keys; their slots may be handed out again."""

    @abstractmethod
    def contains(self, slots: np.ndarray) -> np.ndarray:
        """Whether each slot currently holds a key."""

    @abstractmethod
    def key_groups(self, slots: np.ndarray) -> np.ndarray:
        """Key group of each slot's key."""

    @abstractmethod
    def keys_of(self, slots: np.ndarray) -> list[tuple[Any, ...]]:
        """The key tuples (Python values) of these slots."""

    def key_arrays(self, slots: np.ndarray, types: Sequence[pa.DataType]) -> list[pa.Array]:
        """The key columns of these slots as Arrow arrays of these types (what operators
        emit). This default goes through `keys_of`; `hashmap` builds them from its
        columnar key store without a Python object per key."""
        keys = self.keys_of(slots)
        return [pa.array([k[j] for k in keys], type=t) for j, t in enumerate(types)]

    @abstractmethod
    def live_slots(self) -> np.ndarray:
        """All slots holding a key, in insertion order of their keys."""

    @property
    @abstractmethod
    def capacity(self) -> int:
        """One more than the highest slot ever handed out."""

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """A picklable copy of the key index."""

    @abstractmethod
    def restore(self, snap: dict[str, Any], key_group_range: tuple[int, int] | None = None) -> None:
        """Restore from `snapshot()`, keeping only keys whose key group is in the range."""

    def dispose(self) -> None:
        """Release what the backend holds outside this process's memory (the rocksdb
        working database); the executor calls it when the job's attempt ends. Nothing
        for an in-memory backend."""
        return None
