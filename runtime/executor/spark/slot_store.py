"""A processor's operator state in Spark's state store, written per changed key (stateful.py).

A key group's state is kept in two parts, so that a micro-batch writes what it changed and
not the whole snapshot:

- **Per-key entries** (a MapState keyed by slot) for "generic" operators with keyed state
  (Operator.checkpointing): the key, its key group and the slot's values in every slot
  array (`runtime.state.slot_values`: `find_slot_arrays`, `encode_rows`). Only the slots a
  call looked up or removed are written or deleted (`SlotTracker`), the contract the
  `rocksdb` backend's dirty-slot tracking relies on too (runtime/state/rocksdb.py).
- **The rest**, encoded with the state format (runtime/checkpoint/format.py, no pickle):
  the operator's other attributes with the slot arrays left out (`dump_residual`), or, for
  an operator without that layout ("custom" checkpointing), its whole snapshot. The caller
  cuts it into chunks and rewrites only the chunks whose bytes changed.

Restoring reads every entry once (a fresh worker, or Spark moved the key group) and
rebuilds the key index with the same slots and insertion order, the slot arrays and the
residual, as a restore from the `rocksdb` backend's incremental checkpoint does
(runtime/operators/slot_state.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from runtime.aggregates.aggset import AggregateSet
from runtime.checkpoint import format as state_format
from runtime.operators.base import checkpointing_mode
from runtime.operators.slot_state import native_snapshot  # noqa: F401 - registers the slot containers
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.slot_values import (
    decode_rows,
    dump_residual,
    encode_rows,
    find_slot_arrays,
    layout_of,
    load_residual,
)

# One entry of the per-key MapState: slot -> (key group, packed key, encoded slot values).
ENTRY_KEY = "slot LONG"
ENTRY_VALUE = "grp INT, k BINARY, v BINARY"


def per_key(op: Any) -> bool:
    """Whether `op`'s keyed state is written per key (else its whole snapshot is)."""
    return checkpointing_mode(op) == "generic" and isinstance(op.state, HashMapStateBackend)


class SlotTracker:
    """The slots the operator's keyed backend handed out (`lookup`) or removed since `take`:
    every slot whose values or key may have changed."""

    def __init__(self, keyed: Any) -> None:
        self.seen: list[np.ndarray] = []
        lookup: Callable[..., np.ndarray] = keyed.lookup
        remove: Callable[[np.ndarray], None] = keyed.remove

        def tracked_lookup(keys: Sequence[Any], num_rows: int, create: bool = True) -> np.ndarray:
            slots = lookup(keys, num_rows, create)
            self.seen.append(np.asarray(slots, dtype=np.int64))
            return slots

        def tracked_remove(slots: np.ndarray) -> None:
            self.seen.append(np.asarray(slots, dtype=np.int64))
            remove(slots)

        keyed.lookup = tracked_lookup
        keyed.remove = tracked_remove

    def take(self) -> np.ndarray:
        if not self.seen:
            return np.zeros(0, dtype=np.int64)
        slots = np.unique(np.concatenate(self.seen))
        self.seen = []
        return slots[slots >= 0]


def save(
    op: Any, tracker: SlotTracker, layout: list[str] | None
) -> tuple[bytes, dict[int, tuple[Any, ...] | None], list[str]]:
    """(the encoded rest, the per-key entries to write (None: delete), the slot layout) for
    the slots `tracker` saw since the last save; all live slots when the layout changed
    (`layout`: the previous save's, None on the first)."""
    keyed = op.state
    attrs = {a: getattr(op, a) for a in type(op).state_attributes}
    arrays = find_slot_arrays(attrs, type(op).slot_attributes, keyed.capacity)
    new_layout = layout_of(arrays)
    slots = tracker.take()
    if layout != new_layout:
        slots = np.union1d(slots, keyed.live_slots())
    live = keyed.contains(slots)
    writes: dict[int, tuple[Any, ...] | None] = {int(s): None for s in slots[~live]}
    kept = slots[live]
    if len(kept):
        groups = keyed.key_groups(kept)
        keys = keyed._tuples(kept, normalized=True)  # noqa: SLF001 - the snapshot's key form
        rows = encode_rows(arrays, kept, keyed._seq)  # noqa: SLF001 - insertion order, as rocksdb's
        for s, g, k, r in zip(kept.tolist(), groups.tolist(), keys, rows, strict=True):  # per changed key
            writes[s] = (int(g), state_format.pack_key(tuple(k)), r)
    rest = {
        "residual": dump_residual(attrs, arrays),
        "layout": new_layout,
        "max_parallelism": keyed.max_parallelism,
        "next_seq": int(keyed._next_seq),  # noqa: SLF001
    }
    return state_format.encode(rest), writes, new_layout


def restore(op: Any, rest: dict[str, Any], entries: Iterable[tuple[Any, Any]]) -> list[str]:
    """Restore `op` from the rest (`save`'s, decoded) and every per-key entry ((slot,),
    (group, key, values)); returns the slot layout."""
    slots_l, groups_l, keys, blobs = [], [], [], []
    for k, v in entries:  # one per key: restore only
        slots_l.append(int(k[0]))
        groups_l.append(int(v[0]))
        keys.append(state_format.unpack_key(bytes(v[1])))
        blobs.append(bytes(v[2]))
    layout = list(rest["layout"])
    seq, values = decode_rows(blobs, layout)
    order = np.argsort(seq, kind="stable")
    slots = np.asarray(slots_l, dtype=np.int64)[order]
    keyed = op.state
    keyed.restore(
        {
            "max_parallelism": rest["max_parallelism"],
            "slots": slots,
            "keys": [keys[i] for i in order.tolist()],
            "key_groups": np.asarray(groups_l, dtype=np.int32)[order],
        }
    )
    keyed._seq[slots] = seq[order]  # noqa: SLF001 - the saved insertion order, kept for later saves
    keyed._next_seq = int(rest["next_seq"])  # noqa: SLF001
    cap = max(keyed.capacity, int(slots.max()) + 1 if len(slots) else 0)
    arrays = []
    for dtype, vals in zip(layout, values, strict=True):
        a = np.empty(cap, dtype=dtype) if np.dtype(dtype).hasobject else np.zeros(cap, dtype=dtype)
        a[slots] = vals[order]
        arrays.append(a)
    attrs = load_residual(rest["residual"], arrays)
    dead = np.setdiff1d(np.arange(cap, dtype=np.int64), slots)
    for name, value in attrs.items():
        setattr(op, name, value)
        if len(dead) and isinstance(value, AggregateSet):
            value.reset(dead)  # slots without a key hold the containers' empty values
    op.after_restore()
    return layout
