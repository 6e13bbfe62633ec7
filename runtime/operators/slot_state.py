"""The generic operator snapshot's RocksDB side (Operator.snapshot_state / restore_state).

With the `rocksdb` backend, every checkpoint of a generic operator first writes the values
of the slots written since the previous checkpoint into RocksDB (`write_values`, one
WriteBatch). For an incremental checkpoint (the executor sets `ctx.snapshot_dir`) the
snapshot is then a RocksDB checkpoint of the working database plus the residual
(runtime/state/slot_values.py, encoded as runtime/checkpoint/format.py says); otherwise (full checkpoints, savepoints) it stays the
canonical state file both backends read, so savepoints remain self-contained and portable.

Restore from an incremental checkpoint reads keys and values back from the downloaded
database (`RocksDBStateBackend.read_native`), restores the key index into whatever backend
the job now uses (same slots), rebuilds the slot arrays and resets the slots holding no
key, so hashmap jobs can restore rocksdb checkpoints too.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import numpy as np

from runtime.aggregates.accumulators import Accumulator
from runtime.aggregates.aggset import AggregateSet
from runtime.state.rocksdb import RocksDBStateBackend
from runtime.state.slot_values import (
    NativeSnapshot,
    dump_residual,
    find_slot_arrays,
    layout_of,
    load_residual,
    register_slot_container,
)

register_slot_container(AggregateSet, Accumulator)


def native_snapshot(op: Any, keyed: Any, attrs: dict[str, Any]) -> NativeSnapshot | None:
    """Flush the operator's dirty slot values into RocksDB; for an incremental checkpoint
    also create the RocksDB checkpoint and return its handle (None: take a canonical one)."""
    arrays = find_slot_arrays(attrs, type(op).slot_attributes, keyed.capacity)
    keyed.write_values(arrays)
    path = op.ctx.snapshot_dir
    if path is None:
        return None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    keyed.native_checkpoint(path)
    return NativeSnapshot(
        residual=dump_residual(attrs, arrays),
        layout=layout_of(arrays),
        max_parallelism=keyed.max_parallelism,
        capacity=keyed.capacity,
        local_dir=path,
        keys=len(keyed.live_slots()),
        db_id=str(getattr(keyed, "path", "")),
    )


def _arrays(snap: NativeSnapshot, slots: np.ndarray, values: list[np.ndarray], cap: int) -> list[np.ndarray]:
    """The slot arrays of `snap` rebuilt with `cap` entries (slots without a key: zero/None)."""
    arrays = []
    for dtype, vals in zip(snap.layout, values, strict=True):
        a = np.empty(cap, dtype=dtype) if np.dtype(dtype).hasobject else np.zeros(cap, dtype=dtype)
        a[slots] = vals
        arrays.append(a)
    return arrays


def canonical_snapshot(snap: NativeSnapshot) -> dict[str, Any]:
    """A downloaded RocksDB checkpoint as the generic snapshot dict ({"keyed", "attrs"}),
    for code that merges or re-splits generic snapshots (rescaling). Only live slots carry
    values; the others hold zero/None (a re-split keeps live keys only)."""

    if snap.local_dir is None:
        raise ValueError("incremental snapshot without its RocksDB files (download them first)")
    index, slots, values = RocksDBStateBackend.read_native(snap.local_dir, snap.layout)
    index["max_parallelism"] = snap.max_parallelism
    cap = int(slots.max()) + 1 if len(slots) else 0
    attrs = load_residual(snap.residual, _arrays(snap, slots, values, max(cap, snap.capacity)))
    shutil.rmtree(snap.local_dir, ignore_errors=True)
    snap.local_dir = None
    return {"keyed": index, "attrs": attrs}


def restore_native(op: Any, snap: NativeSnapshot, key_group_range: tuple[int, int] | None = None) -> None:
    """Restore `op` from a downloaded incremental checkpoint (`snap.local_dir`)."""

    if snap.local_dir is None:
        raise ValueError("incremental snapshot restored without its RocksDB files (download them first)")
    index, slots, values = RocksDBStateBackend.read_native(snap.local_dir, snap.layout, key_group_range)
    index["max_parallelism"] = snap.max_parallelism
    keyed = op.state
    keyed.restore(index)
    cap = max(keyed.capacity, int(slots.max()) + 1 if len(slots) else 0)
    attrs = load_residual(snap.residual, _arrays(snap, slots, values, cap))
    dead = np.setdiff1d(np.arange(cap, dtype=np.int64), slots)
    for name, value in attrs.items():
        setattr(op, name, value)
        if len(dead) and isinstance(value, AggregateSet):
            value.reset(dead)  # slots without a key hold the containers' empty values
    shutil.rmtree(snap.local_dir, ignore_errors=True)
