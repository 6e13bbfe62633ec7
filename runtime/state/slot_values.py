"""Operator values per slot, cut out of an operator's state so they can live in RocksDB.

Operators keep per-key values in slot-indexed arrays (runtime/state/backend.py). With the
`rocksdb` backend those values are also written into the database, one entry per key
(`rocksdb.value_keys`: key group, a 0x00 tag, the slot), so that an incremental checkpoint
is a RocksDB checkpoint plus a small *residual*: everything else the operator keeps,
encoded (runtime/checkpoint/format.py) with each slot array replaced by a placeholder (`SlotArrayRef`).

Which arrays are slot-indexed is declared, never guessed (a wrongly split array would lose
values): a top-level operator attribute named in `Operator.slot_attributes`, or a 1-D
array attribute of an object whose type is registered with `register_slot_container`
(`AggregateSet`, the accumulators) whose length covers the backend's capacity. Anything
else (dicts keyed by slot, DISTINCT's seen-sets, session buffers, TTL timestamps) stays
in the residual and is written whole at every checkpoint, which is always correct.

Row encoding (`encode_rows` / `decode_rows`) is vectorized for numeric arrays: the dirty
slots' values are gathered into one byte matrix (8-byte insertion sequence first, then
each array's item bytes) whose rows become the RocksDB values; object arrays (DECIMAL
sums, MIN/MAX multisets, LISTAGG lists) append one encoded tuple per row, the only
per-row Python work, and only for dirty slots at checkpoint time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any, cast

import numpy as np

from runtime.checkpoint import format as state_format
from runtime.frozen import frozen_dataclass, mutable_dataclass

_CONTAINERS: list[type] = []


def register_slot_container(*types: type) -> None:
    """Declare that 1-D numpy attributes of these types' instances are slot-indexed (they
    are state types too: runtime/checkpoint/format.py)."""
    for t in types:
        if t not in _CONTAINERS:
            _CONTAINERS.append(t)
        state_format.register_state_type(t)


@frozen_dataclass
class SlotArrayRef:
    """Placeholder for a slot array inside a residual: its position and dtype."""

    index: int
    dtype: str


def _collect(obj: Any, capacity: int, found: dict[int, np.ndarray], seen: set[int]) -> None:
    """Slot arrays reachable from `obj` through registered containers (and the lists,
    tuples and dicts they hold)."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, (list, tuple)):
        for x in obj:
            _collect(x, capacity, found, seen)
    elif isinstance(obj, dict):
        for x in obj.values():
            _collect(x, capacity, found, seen)
    elif _CONTAINERS and isinstance(obj, tuple(_CONTAINERS)):
        if getattr(type(obj), "__getstate__", None) is not object.__getstate__:
            return  # its state is what its own __getstate__ writes (DistinctAcc): left whole in the residual
        for v in vars(obj).values():
            if isinstance(v, np.ndarray):
                if v.ndim == 1 and len(v) >= capacity:
                    found[id(v)] = v
            else:
                _collect(v, capacity, found, seen)


def find_slot_arrays(attrs: dict[str, Any], slot_attributes: Iterable[str], capacity: int) -> list[np.ndarray]:
    """The slot arrays of an operator's state attributes, in a deterministic order."""
    if capacity <= 0:
        return []
    found: dict[int, np.ndarray] = {}
    seen: set[int] = set()
    names = set(slot_attributes)
    for name, value in attrs.items():
        if name in names and isinstance(value, np.ndarray) and value.ndim == 1 and len(value) >= capacity:
            found[id(value)] = value
        else:
            _collect(value, capacity, found, seen)
    return list(found.values())


def dump_residual(attrs: dict[str, Any], arrays: list[np.ndarray]) -> bytes:
    """Encode `attrs` (runtime/checkpoint/format.py) with every array of `arrays` replaced
    by a `SlotArrayRef`."""
    ids = {id(a): i for i, a in enumerate(arrays)}
    return state_format.pack(_replace(attrs, ids, arrays))


def _replace(obj: Any, ids: dict[int, int], arrays: list[np.ndarray]) -> Any:
    """`obj` with the slot arrays (by identity) replaced by placeholders: the containers on
    the way are copied, registered state types as shallow copies of their fields."""
    if type(obj) is np.ndarray:
        i = ids.get(id(obj))
        return obj if i is None else SlotArrayRef(i, arrays[i].dtype.str)
    if type(obj) is dict:
        return {k: _replace(v, ids, arrays) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(_replace(v, ids, arrays) for v in obj)
    if _CONTAINERS and isinstance(obj, tuple(_CONTAINERS)):
        copy = object.__new__(type(obj))
        for k, v in vars(obj).items():
            object.__setattr__(copy, k, _replace(v, ids, arrays))
        return copy
    return obj


def load_residual(data: bytes, arrays: list[np.ndarray]) -> dict[str, Any]:
    """Decode a residual, putting `arrays[ref.index]` where each placeholder was."""
    return cast("dict[str, Any]", _restore_refs(state_format.unpack(data), arrays))


def _restore_refs(obj: Any, arrays: list[np.ndarray]) -> Any:
    if type(obj) is SlotArrayRef:
        return arrays[obj.index]
    if type(obj) is dict:
        return {k: _restore_refs(v, arrays) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(_restore_refs(v, arrays) for v in obj)
    if _CONTAINERS and isinstance(obj, tuple(_CONTAINERS)):
        for k, v in vars(obj).items():
            object.__setattr__(obj, k, _restore_refs(v, arrays))
    return obj


def layout_of(arrays: list[np.ndarray]) -> list[str]:
    """The dtypes of the slot arrays, in order: the row format of the value entries."""
    return [a.dtype.str for a in arrays]


def _fixed_width(layout: list[str]) -> int:
    return 8 + sum(np.dtype(d).itemsize for d in layout if not np.dtype(d).hasobject)


def encode_rows(arrays: list[np.ndarray], slots: np.ndarray, seq: np.ndarray) -> list[bytes]:
    """One value per slot: insertion sequence, then every array's value at the slot."""
    n = len(slots)
    if n == 0:
        return []
    parts = [np.ascontiguousarray(seq[slots].astype(">i8")).view(np.uint8).reshape(n, 8)]
    objects = []
    for a in arrays:
        if a.dtype.hasobject:
            objects.append(a[slots].tolist())
        else:
            parts.append(np.ascontiguousarray(a[slots]).view(np.uint8).reshape(n, a.dtype.itemsize))
    mat = np.ascontiguousarray(np.concatenate(parts, axis=1))
    fixed = cast("list[bytes]", mat.view(np.dtype((np.void, mat.shape[1]))).ravel().tolist())
    if not objects:
        return fixed
    pack = state_format.pack
    return [f + pack(r) for f, r in zip(fixed, zip(*objects, strict=True), strict=True)]


def decode_rows(blobs: list[bytes], layout: list[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Inverse of `encode_rows`: the sequence numbers and one value array per layout entry."""
    n = len(blobs)
    width = _fixed_width(layout)
    has_objects = any(np.dtype(d).hasobject for d in layout)
    if has_objects:
        fixed = b"".join(b[:width] for b in blobs)
        rows = [state_format.unpack(b[width:]) for b in blobs]  # restore only
    else:
        fixed = b"".join(blobs)
        rows = []
    mat = np.frombuffer(fixed, dtype=np.uint8).reshape(n, width)
    seq = mat[:, :8].copy().view(">i8").reshape(n).astype(np.int64)
    out: list[np.ndarray] = []
    off, obj_i = 8, 0
    for d in layout:
        dt = np.dtype(d)
        if dt.hasobject:
            col = np.empty(n, dtype=object)
            col[:] = [r[obj_i] for r in rows] if n else []
            obj_i += 1
            out.append(col)
        else:
            out.append(mat[:, off : off + dt.itemsize].copy().view(dt).reshape(n))
            off += dt.itemsize
    return seq, out


@mutable_dataclass
class NativeSnapshot:
    """What a generic operator returns for an incremental (rocksdb) checkpoint.

    `local_dir` is the RocksDB checkpoint the backend just created (hard links into the
    working database); the executor uploads its files (`runtime/checkpoint/incremental.py`)
    and records in `files` where each one went (relative to the checkpoint storage root),
    then clears `local_dir`. Restore downloads `files` into a local directory and sets
    `local_dir` again before `Operator.restore_state` sees it.
    """

    residual: bytes
    layout: list[str]
    max_parallelism: int
    capacity: int
    local_dir: str | None = None
    files: dict[str, str] = field(default_factory=dict)
    keys: int = 0
    db_id: str = ""  # the working database the files come from (SST names are per database)
    digests: dict[str, str] = field(default_factory=dict)  # file name -> "sha256:<hex>"


state_format.register_state_type(SlotArrayRef)
state_format.register_state_type(NativeSnapshot)
