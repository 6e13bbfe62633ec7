"""Restoring operator state with another parallelism: re-split keyed state by key group.

A snapshot of a job that ran with N subtasks holds, per operator, N states, each with the
inclusive key-group range its subtask owned (`LoadedSnapshot.subtask_states(uid)`; a
single-subtask snapshot is one entry covering every key group). A job restored with M
subtasks builds the state of its subtask `i` with

    rescale_operator_states(op, old, new_range, subtask_index=i, parallelism=M)

where `op` is the (open, fresh) operator instance of that subtask, `old` the list of
`((first, last), state)` entries and `new_range` = `key_group_range(i, M, max_par)`. The
result is what `op.restore_state` takes. Keyed state keeps exactly the keys whose key
group is in `new_range`, gathered from every old subtask; timers and pending windows of
other keys are dropped with their keys (else a window would fire once per subtask).

How an operator is re-split:

- same layout (an old entry has exactly `new_range` and there are M entries): that entry,
  unchanged (nothing is merged or re-numbered);
- otherwise the operator's `rescale_snapshots(old, new_range, subtask_index, parallelism)`
  hook (runtime/operators/base.py) does it: the custom-state operators (sources, sinks,
  joins, Rank, Deduplicate) override it in their own modules with the helpers below;
  the base class returns None for "stateless" operators and merges "generic" ones:
- "generic" operators declare how each of their `state_attributes` merges in the class
  attribute `state_merge` ({attribute: kind}, kinds in `GENERIC_KINDS`). The keyed
  backend snapshots of all old subtasks are filtered to `new_range` and their slots
  re-numbered densely (0..K-1: slots of two old subtasks collide), and every
  slot-indexed attribute is re-numbered the same way;
- anything else raises `RestoreError` naming the operator ("cannot be restored with
  another parallelism yet"): never a silently wrong restore.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from runtime.aggregates.accumulators import Accumulator
from runtime.aggregates.aggset import AggregateSet
from runtime.checkpoint import format as state_format
from runtime.checkpoint.restore import RestoreError
from runtime.config.core import MAX_PARALLELISM
from runtime.operators.slot_state import canonical_snapshot
from runtime.operators.spec import spec_for
from runtime.plan_params import AggCallParams, WindowParams
from runtime.state.keycolumns import SnapshotKeys
from runtime.state.keygroups import key_group_range, key_groups_of_rows
from runtime.state.slot_values import NativeSnapshot
from runtime.state.ttl import NEVER
from runtime.types import DataType

if TYPE_CHECKING:
    from runtime.operators.base import Operator

OldStates = Sequence[tuple[tuple[int, int], Any]]

# How a generic operator's attribute merges (`state_merge` values):
GENERIC_KINDS = {
    "slot_array": "a numpy array indexed by key slot (per-key values, timers)",
    "slot_object": "an object holding per-slot arrays, e.g. an AggregateSet (walked attribute by attribute)",
    "slot_dict": "a dict keyed by key slot",
    "session_windows": "SessionWindows: open sessions and buffered rows carry their key slot",
    "state_ttl": "StateTtl: last-write time per slot (runtime/state/ttl.py)",
    "min": "a scalar: the minimum over the old subtasks (watermarks)",
    "max": "a scalar: the maximum over the old subtasks",
    "any": "a bool: true if it is true in any old subtask",
    "first": "a scalar the same in every subtask: the first old subtask's",
    "concat": "an operator-wide list: all old subtasks' items, kept by new subtask 0",
}


# ---------------------------------------------------------------------- entry point
def rescale_operator_states(
    op: Operator, old: OldStates, new_range: tuple[int, int], subtask_index: int, parallelism: int
) -> Any:
    """The snapshot new subtask `subtask_index` of `parallelism` restores `op` from
    (module docstring). `old`: every old subtask's `(key_group_range, state)` in subtask
    order; `new_range`: the inclusive key-group range the new subtask owns."""
    old = [((int(r[0]), int(r[1])), s) for r, s in old]
    if not old:
        return None
    same = [s for r, s in old if r == tuple(new_range)]
    if same and len(old) == parallelism:
        return same[0]
    if all(s is None for _, s in old):
        return None
    return op.rescale_snapshots(old, (int(new_range[0]), int(new_range[1])), subtask_index, parallelism)


def cannot_rescale_message(op: Operator, why: str = "") -> str:
    label = op.node.label or op.node.operator
    extra = f" ({why})" if why else ""
    return (
        f"Operator {op.node.operator} (node {op.node.id}, {label}) cannot be restored with another "
        f"parallelism yet{extra}: restore the snapshot with the parallelism it was taken with."
    )


def load_state(state: Any) -> Any:
    """An operator snapshot as a Python object (generic/custom snapshots are encoded bytes;
    a RocksDB checkpoint becomes the generic dict, runtime/operators/slot_state.py)."""
    if isinstance(state, NativeSnapshot):
        return canonical_snapshot(state)
    return state_format.unpack(state) if isinstance(state, bytes) else state


# ---------------------------------------------------------------------- key groups
def max_parallelism_of(backend: Any) -> int:
    """The number of key groups of an operator's keyed backend (128 without one)."""
    return int(getattr(backend, "max_parallelism", 128) or 128)


def in_key_group_range(groups: np.ndarray, new_range: tuple[int, int]) -> np.ndarray:
    """Which of these key groups the new subtask owns (inclusive range)."""
    return (groups >= new_range[0]) & (groups <= new_range[1])


def key_groups_of(columns: Sequence[pa.Array | pa.ChunkedArray], n: int, max_par: int) -> np.ndarray:
    """Key group of every row's key columns: the function the state backends and the hash
    exchange use, so a row follows its key."""
    return key_groups_of_rows(list(columns), n, max_par).astype(np.int64)


def operator_max_parallelism(op: Operator) -> int:
    """The number of key groups `op`'s input is routed over (`pipeline.max-parallelism`,
    read as the hash exchange reads it), also for an operator without a keyed backend."""
    backend = getattr(op, "state", None) or op.ctx.state
    if backend is not None:
        return max_parallelism_of(backend)
    return int(MAX_PARALLELISM.get(op.ctx.config))


def exchange_keys(op: Operator, input_index: int = 0) -> tuple[int, ...]:
    """The columns of input `input_index` the hash Exchange in front of `op` routes rows
    by (its spec's `input_keys`, the one declaration the planner places the Exchange
    from): state kept per input row is re-split by exactly these columns, never by the
    window or partition columns it is stored under (no columns: a "single" exchange,
    every row in key group 0)."""
    spec = spec_for(op.node.operator)
    if spec is None:
        raise RestoreError(cannot_rescale_message(op, "its kind declares no spec"))
    return tuple(spec.input_keys(spec.params(op.node), input_index))


def owned_rows(
    rows: pa.Table | pa.RecordBatch | None, keys: Sequence[int], new_range: tuple[int, int], max_par: int
) -> np.ndarray:
    """Which of these stored input rows the new subtask owns: the key group of their
    exchange key columns `keys` (`exchange_keys`) lies in `new_range`."""
    if rows is None or rows.num_rows == 0:
        return np.zeros(0, dtype=bool)
    return in_key_group_range(key_groups_of([rows.column(k) for k in keys], rows.num_rows, max_par), new_range)


def key_group_zero_state(old: OldStates, new_range: tuple[int, int]) -> Any:
    """State that is all in key group 0 (an operator fed by a "single" exchange, or keyed
    on no columns): the new subtask owning group 0 takes the old owner's state
    unchanged, every other new subtask starts empty (None)."""
    if new_range[0] > 0:
        return None
    return next((s for (lo, hi), s in old if lo <= 0 <= hi), None)


def renumber(ids: np.ndarray, mapping: np.ndarray, base: int = 0) -> np.ndarray:
    """`mapping[ids - base]` (new numbers of old ids; -1 for ids outside the mapping or
    dropped): re-numbering store ids and slots of the rows a new subtask keeps."""
    ids = np.asarray(ids, dtype=np.int64) - base
    ok = (ids >= 0) & (ids < len(mapping))
    out = np.full(len(ids), -1, dtype=np.int64)
    out[ok] = mapping[ids[ok]]
    return out


# ---------------------------------------------------------------------- keyed snapshots
class SlotPlan:
    """Which keys of one old keyed-backend snapshot the new subtask keeps, and their new
    slots: `old_slots[j]` becomes slot `offset + j` (dense across all old subtasks)."""

    def __init__(self, snap: dict[str, Any] | None, new_range: tuple[int, int], offset: int) -> None:
        if snap is None:
            snap = {"slots": [], "keys": [], "key_groups": []}
        slots = np.asarray(snap["slots"], dtype=np.int64)
        groups = np.asarray(snap["key_groups"], dtype=np.int64)
        keep = (groups >= new_range[0]) & (groups <= new_range[1])
        self.max_parallelism = snap.get("max_parallelism")
        self.old_slots = slots[keep]
        keys = snap["keys"]
        self.keys: SnapshotKeys | list[Any] = (
            keys.take(keep)
            if isinstance(keys, SnapshotKeys)
            else [k for k, m in zip(keys, keep.tolist(), strict=True) if m]
        )
        self.groups = groups[keep]
        self.offset = offset
        self.new_slots = offset + np.arange(len(self.old_slots), dtype=np.int64)
        top = int(slots.max()) + 1 if len(slots) else 0
        self.mapping = np.full(top, -1, dtype=np.int64)  # old slot -> new slot (-1: dropped)
        self.mapping[self.old_slots] = self.new_slots

    def __len__(self) -> int:
        return len(self.old_slots)

    def remap(self, slots: np.ndarray) -> np.ndarray:
        """New slot of every old slot (-1: the key is not kept, or was never a key)."""
        slots = np.asarray(slots, dtype=np.int64)
        ok = (slots >= 0) & (slots < len(self.mapping))
        out = np.full(len(slots), -1, dtype=np.int64)
        out[ok] = self.mapping[slots[ok]]
        return out


def plan_slots(snaps: Sequence[dict[str, Any] | None], new_range: tuple[int, int]) -> list[SlotPlan]:
    """One SlotPlan per old keyed snapshot, numbering the kept keys densely in order."""
    plans, offset = [], 0
    for s in snaps:
        p = SlotPlan(s, new_range, offset)
        offset += len(p)
        plans.append(p)
    return plans


def merged_keyed(plans: Sequence[SlotPlan], default_max_parallelism: int = 128) -> dict[str, Any]:
    """The keyed-backend snapshot (`KeyedStateBackend.restore` format) of the kept keys."""
    total = sum(len(p) for p in plans)
    maxp = next((p.max_parallelism for p in plans if p.max_parallelism), default_max_parallelism)
    parts = [p.keys for p in plans if len(p)]
    columnar = bool(parts) and all(isinstance(k, SnapshotKeys) for k in parts)
    return {
        "max_parallelism": maxp,
        "slots": list(range(total)),
        "keys": SnapshotKeys.concat(parts) if columnar else [k for p in plans for k in p.keys],  # type: ignore[arg-type]
        "key_groups": [int(g) for p in plans for g in p.groups.tolist()],
    }


def take_slot_array(arr: np.ndarray, old_slots: np.ndarray, what: str = "state", pad: bool = False) -> np.ndarray:
    """The values of `old_slots`. With `pad`, slots beyond the array (never written: the
    operator grows such arrays with zeros) read as zero; otherwise that is an error."""
    arr = np.asarray(arr)
    if len(old_slots) and int(old_slots.max()) >= len(arr):
        if not pad:
            raise RestoreError(f"cannot re-split {what}: a key's slot lies beyond its per-key array")
        out = np.zeros(len(old_slots), dtype=arr.dtype)
        inside = old_slots < len(arr)
        out[inside] = arr[old_slots[inside]]
        return out
    return arr[old_slots]


def concat_slot_arrays(parts: Sequence[np.ndarray], like: np.ndarray) -> np.ndarray:
    parts = [p for p in parts if p is not None]
    if not parts:
        return np.zeros(0, dtype=like.dtype)
    return np.concatenate(parts)


# ---------------------------------------------------------------------- slot objects
def merge_slot_objects(objs: Sequence[Any], plans: Sequence[SlotPlan]) -> Any:
    """Merge objects holding per-slot state (an AggregateSet and its accumulators), each
    from one old subtask with its SlotPlan, into one object over the new dense slots.

    Rules, attribute by attribute (the first object supplies everything else):
    1-D numpy arrays are slot-indexed (taken by the plan, concatenated); a list of
    accumulators/objects is walked element by element; other lists are slot-indexed
    unless all their elements are Arrow/Flink types or dicts (configuration: `arg_types`,
    `calls`); dicts keyed by slot or by tuples starting with the slot (DISTINCT's
    `seen`) are re-keyed; nested objects with a `__dict__` from the runtime are walked;
    `capacity` becomes the new slot count; attributes a class names in `rescale_config`
    are configuration and kept as they are.
    """
    pairs = [(o, p) for o, p in zip(objs, plans, strict=True) if o is not None]
    if not pairs:
        return None
    total = sum(len(p) for p in plans)
    base = pairs[0][0]
    new = copy.copy(base)
    config = set(getattr(type(base), "rescale_config", ()))  # attributes that are not per-slot
    for name, v0 in vars(base).items():
        if name in config:
            continue  # kept from the first object (copied)
        values = [getattr(o, name, None) for o, _ in pairs]
        ps = [p for _, p in pairs]
        setattr(new, name, _merge_value(name, v0, values, ps, total))
    return new


def _is_config_list(values: Sequence[Any]) -> bool:
    items = [x for v in values for x in v]
    config_types = (pa.DataType, DataType, dict, str, AggCallParams, WindowParams)  # plan params: configuration
    return bool(items) and all(isinstance(x, config_types) for x in items)


def _is_runtime_object(v: Any) -> bool:
    """Objects the walker descends into: accumulator sets and accumulators (their other
    attributes, e.g. a result DataType, are configuration and kept as they are)."""
    return isinstance(v, (Accumulator, AggregateSet))


def _merge_value(name: str, v0: Any, values: list[Any], plans: list[SlotPlan], total: int) -> Any:
    if name == "capacity" and isinstance(v0, int):
        return total
    if isinstance(v0, np.ndarray) and v0.ndim == 1:
        return concat_slot_arrays(
            [take_slot_array(v, p.old_slots, name) for v, p in zip(values, plans, strict=True)], v0
        )
    if isinstance(v0, list):
        if values and all(isinstance(v, list) and v and all(_is_runtime_object(x) for x in v) for v in values):
            width = len(v0)
            if any(len(v) != width for v in values):
                raise RestoreError(f"cannot re-split {name}: the old subtasks' states differ in shape")
            return [merge_slot_objects([v[i] for v in values], plans) for i in range(width)]
        if _is_config_list(values) or not any(values):
            return v0
        out: list[Any] = []
        for v, p in zip(values, plans, strict=True):
            if len(p.old_slots) and int(p.old_slots.max()) >= len(v):
                raise RestoreError(f"cannot re-split {name}: a key's slot lies beyond its per-key list")
            out.extend(v[s] for s in p.old_slots.tolist())  # loop over kept keys (restore time)
        return out
    if isinstance(v0, dict):
        return merge_slot_dicts(values, plans, name)
    if _is_runtime_object(v0):
        return merge_slot_objects(values, plans)
    return v0


def merge_slot_dicts(values: Sequence[dict[Any, Any] | None], plans: Sequence[SlotPlan], name: str) -> dict[Any, Any]:
    """Dicts keyed by slot (int) or by a tuple whose first element is the slot: re-keyed to
    the new slots, entries of dropped keys left out."""
    out: dict[Any, Any] = {}
    for d, p in zip(values, plans, strict=True):
        for k, v in (d or {}).items():  # loop over entries (restore time)
            slot = k[0] if isinstance(k, tuple) and k else k
            if not isinstance(slot, (int, np.integer)) or isinstance(slot, bool):
                raise RestoreError(f"cannot re-split {name}: its entries are not keyed by slot")
            new = int(p.remap(np.array([slot]))[0])
            if new < 0:
                continue
            out[(new, *k[1:]) if isinstance(k, tuple) else new] = v
    return out


# ---------------------------------------------------------------------- session windows
def merge_session_windows(objs: Sequence[Any], plans: Sequence[SlotPlan]) -> Any:
    """SessionWindows: open sessions (`s_key` = key slot) and buffered rows (`buf_key`)
    of kept keys, re-keyed; everything of other keys dropped."""
    pairs = [(o, p) for o, p in zip(objs, plans, strict=True) if o is not None]
    if not pairs:
        return None
    new = copy.copy(pairs[0][0])
    keys, starts, ends, bufs, bkeys, bts = [], [], [], [], [], []
    for o, p in pairs:
        nk = p.remap(o.s_key)
        m = nk >= 0
        keys.append(nk[m])
        starts.append(o.s_start[m])
        ends.append(o.s_end[m])
        bk = np.concatenate(o.buf_key) if o.buf_key else np.zeros(0, dtype=np.int64)
        bt = np.concatenate(o.buf_ts) if o.buf_ts else np.zeros(0, dtype=np.int64)
        if len(bk):
            nbk = p.remap(bk)
            keep = nbk >= 0
            table = pa.Table.from_batches(o.buffers).combine_chunks().filter(pa.array(keep))
            bufs.extend(table.to_batches())
            bkeys.append(nbk[keep])
            bts.append(bt[keep])
    new.s_key = np.concatenate(keys).astype(np.int64)
    new.s_start = np.concatenate(starts).astype(np.int64)
    new.s_end = np.concatenate(ends).astype(np.int64)
    new.buffers = [pa.concat_batches(bufs)] if bufs else []
    new.buf_key = [np.concatenate(bkeys)] if bkeys else []
    new.buf_ts = [np.concatenate(bts)] if bts else []
    pending = []
    for o, p in pairs:  # fired, not yet emitted: (key slot, start, end, id, timer) arrays
        for entry in getattr(o, "pending", None) or []:
            nk = p.remap(entry[0])
            m = nk >= 0
            if m.any():
                pending.append((nk[m], *(a[m] for a in entry[1:])))
    if hasattr(new, "pending"):
        new.pending = pending
    if hasattr(new, "ids_valid"):  # session ids are rebuilt from keys and times on first use
        new.ids_valid = False
        new.s_id = np.zeros(len(new.s_key), dtype=np.int64)
        new.buf_sid = []
    return new


def merge_ttl(objs: Sequence[Any], plans: Sequence[Any], like: Any) -> Any:
    """StateTtl: the last-write times of kept slots (slots it never tracked: NEVER).
    `plans[i].old_slots` are the kept slots of `objs[i]`, in new-slot order."""
    pairs = [(o, p) for o, p in zip(objs, plans, strict=True) if o is not None]
    if not pairs:
        return like
    new = copy.copy(pairs[0][0])
    parts = []
    for o, p in pairs:
        last = np.asarray(o.last, dtype=np.int64)
        got = np.full(len(p.old_slots), NEVER, dtype=np.int64)
        inside = p.old_slots < len(last)
        got[inside] = last[p.old_slots[inside]]
        parts.append(got)
    new.last = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    new.reconfigure(getattr(like, "ttl_ms", new.ttl_ms))
    return new


# ---------------------------------------------------------------------- generic operators
def _scalar(kind: str) -> Callable[[list[Any]], Any]:
    rules: dict[str, Callable[[list[Any]], Any]] = {
        "min": min,
        "max": max,
        "any": lambda vs: any(bool(v) for v in vs),
        "first": lambda vs: vs[0],
    }
    return rules[kind]


def merge_generic(op: Operator, old: OldStates, new_range: tuple[int, int], subtask_index: int) -> Any:
    """Re-split the base-class ("generic") snapshots of `op` (module docstring)."""
    declared = dict(type(op).state_merge)
    attrs = tuple(type(op).state_attributes)
    missing = [a for a in attrs if declared.get(a) not in GENERIC_KINDS]
    if missing:
        raise RestoreError(cannot_rescale_message(op, f"no merge rule for {', '.join(missing)}"))
    snaps = [load_state(s) for _, s in old]
    present = [s for s in snaps if s is not None]
    plans = plan_slots([s.get("keyed") if s is not None else None for s in snaps], new_range)
    maxp = max_parallelism_of(op.state)
    keyed_present = any(s is not None and s.get("keyed") is not None for s in snaps)
    merged: dict[str, Any] = {"keyed": merged_keyed(plans, maxp) if keyed_present else None, "attrs": {}}
    for name in attrs:
        kind = declared[name]
        values = [None if s is None else s["attrs"].get(name) for s in snaps]
        if kind == "slot_array":
            arrs = [v for v in values if v is not None]
            if not arrs:
                merged["attrs"][name] = getattr(op, name)
                continue
            merged["attrs"][name] = concat_slot_arrays(
                [
                    take_slot_array(v, p.old_slots, name, pad=True)
                    for v, p in zip(values, plans, strict=True)
                    if v is not None
                ],
                arrs[0],
            )
        elif kind == "slot_object":
            m = merge_slot_objects(values, plans)
            merged["attrs"][name] = m if m is not None else getattr(op, name)
        elif kind == "slot_dict":
            merged["attrs"][name] = merge_slot_dicts(values, plans, name)
        elif kind == "session_windows":
            m = merge_session_windows(values, plans)
            merged["attrs"][name] = m if m is not None else getattr(op, name)
        elif kind == "state_ttl":
            merged["attrs"][name] = merge_ttl(values, plans, getattr(op, name))
        elif kind == "concat":
            items: list[Any] = []
            if subtask_index == 0:
                for v in values:
                    items.extend(v or [])
            merged["attrs"][name] = items
        else:
            vals = [s["attrs"][name] for s in present if name in s["attrs"]]
            merged["attrs"][name] = _scalar(kind)(vals) if vals else getattr(op, name)
    return state_format.pack(merged)


# ---------------------------------------------------------------------- splitting helpers (tests, tools)
def split_states(
    op_factory: Callable[[int], Operator], state: Any, parallelism: int, max_parallelism: int
) -> list[tuple[tuple[int, int], Any]]:
    """One state re-split into `parallelism` subtask states with their key-group ranges
    (what a job restored with that parallelism builds): `op_factory(i)` gives a fresh open
    operator for subtask i."""
    old = [((0, max_parallelism - 1), state)]
    out = []
    for i in range(parallelism):
        rng = key_group_range(i, parallelism, max_parallelism)
        out.append((rng, rescale_operator_states(op_factory(i), old, rng, i, parallelism)))
    return out


def merge_executor_state(entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The executor's watermark bookkeeping (`OperatorState.executor`) of several old
    subtasks merged for one new subtask: input and node watermarks are the minimum over
    the subtasks (a watermark never runs ahead of any old subtask's), an input counts as
    ended only when it ended in every subtask."""
    entries = [e for e in entries if e]
    if not entries:
        return {}
    widths = {len(e.get("input_wm", [])) for e in entries}
    if len(widths) != 1:
        return dict(entries[0])
    wms = np.array([[int(w) for w in e.get("input_wm", [])] for e in entries], dtype=np.int64)
    ended = set.intersection(*[{int(i) for i in e.get("ended", [])} for e in entries])
    out: dict[str, Any] = {
        "input_wm": wms.min(axis=0).tolist() if wms.size else [],
        "ended": sorted(ended),
    }
    nodes = [int(e["node_wm"]) for e in entries if "node_wm" in e]
    if nodes:
        out["node_wm"] = min(nodes)
    return out
