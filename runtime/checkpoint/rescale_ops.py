"""Re-splitting the custom snapshots of sources, sinks, joins, Rank and Deduplicate for
another parallelism (the operators' `rescale_snapshots` hooks call these; the contract and
the generic operators are in runtime/checkpoint/rescale.py).

Every function takes the fresh, open operator of the new subtask, the old subtasks'
`((first, last), state)` entries, the new subtask's key-group range, its index and the new
parallelism, and returns what that operator's `restore_state` takes.
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.checkpoint.rescale import (
    OldStates,
    SlotPlan,
    concat_slot_arrays,
    load_state,
    merge_ttl,
    merged_keyed,
    plan_slots,
    take_slot_array,
)
from runtime.state.keygroups import key_groups_of_rows


def _in_range(groups: np.ndarray, new_range: tuple[int, int]) -> np.ndarray:
    return (groups >= new_range[0]) & (groups <= new_range[1])


def _max_parallelism(backend: Any) -> int:
    return int(getattr(backend, "max_parallelism", 128) or 128)


def _groups_of(columns: Sequence[pa.Array | pa.ChunkedArray], n: int, max_par: int) -> np.ndarray:
    """Key group of every row's key columns: the function the state backends and the hash
    exchange use, so a row follows its key."""
    return key_groups_of_rows(list(columns), n, max_par).astype(np.int64)


# ---------------------------------------------------------------------- sources
def rescale_source(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Split states are reassigned: new subtask `index` takes the splits whose position in
    the source's split list modulo `parallelism` is `index` (a split discovered later, not
    in that list, by a stable hash of its name): splits not started, and the splits old
    subtasks were reading with their offsets, resumed first. Nothing is asked of the
    connector."""
    states = [load_state(s) for _, s in old if s is not None]
    # the source's whole split list (a parallel subtask's `_pending` holds only its share)
    position = {s: i for i, s in enumerate(op.source.splits() if op.source is not None else [])}

    def mine(split: str) -> bool:
        pos = position.get(split)
        if pos is None:
            pos = zlib.crc32(str(split).encode("utf-8"))
        return pos % parallelism == index

    in_progress: list[dict[str, Any]] = []
    pending: list[str] = []
    known: set[str] | None = None
    for st in states:
        resumes = list(st.get("resume") or [])
        if st.get("split") is not None:
            resumes.insert(0, {"split": st["split"], "offset": st.get("offset"), "split_rows": st.get("split_rows")})
        in_progress += [r for r in resumes if mine(r["split"])]
        pending += [s for s in st.get("pending") or [] if mine(s)]
        if st.get("known") is not None:
            known = (known or set()) | set(st["known"])
    # each old subtask's own order of its splits is kept; only ownership changes
    first = in_progress[0] if in_progress else None
    return {
        "pending": pending,
        "split": None if first is None else first["split"],
        "offset": None if first is None else first.get("offset"),
        "split_rows": 0 if first is None else int(first.get("split_rows") or 0),
        "resume": in_progress[1:],
        "finished": bool(states) and all(st.get("finished") for st in states) and not (pending or in_progress),
        "known": sorted(known) if known is not None else None,
    }


# ---------------------------------------------------------------------- sinks
def rescale_sink(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Two-phase-commit sinks: new subtask 0 takes over every old subtask's pre-committed
    transactions (so each is committed exactly once, idempotently); new subtask `i` keeps
    old subtask `i`'s own bookkeeping (part-file uuid and counter, transaction prefix), so
    it cleans up that subtask's uncommitted files. Hidden uncommitted files of old subtasks
    beyond the new parallelism are left in place (never published)."""
    states = [load_state(s) for _, s in old]
    pending: dict[Any, Any] = {}
    if index == 0:
        for i, st in enumerate(states):
            for cid, committable in sorted((st or {}).get("pending", {}).items()):
                pending[(int(cid), i)] = committable
    own = states[index] if index < len(states) and states[index] is not None else None
    return {"pending": pending, "sink": None if own is None else own.get("sink")}


# ---------------------------------------------------------------------- regular join
def _join_side(
    op: Any, d: dict[str, Any], side: int, plan: SlotPlan, new_range: tuple[int, int], max_par: int, offset: int
) -> dict[str, Any]:
    """One old subtask's side of a regular join restricted to the new range: live rows
    whose join key's group is in it, re-numbered from `offset` (slots and value positions)."""
    from runtime.operators._common import conform

    count = np.asarray(d["count"], dtype=np.int64)
    live = np.flatnonzero(count > 0)
    cols: list[pa.Array] = list(d["columns"] or [])
    if len(live) and cols:
        pos = pa.array(np.asarray(d["pos"], dtype=np.int64)[live], type=pa.int64())
        keys = []
        for j, k in enumerate(op.keys[side]):
            c = cols[k].take(pos)
            keys.append(conform(c, op.key_types[j]) if j < len(op.key_types) else c)
        groups = _groups_of(keys, len(live), max_par)
        live = live[_in_range(groups, new_range)]
    key = np.asarray(d["key"], dtype=np.int64)[live]
    new_key = np.where(key >= 0, plan.remap(key), -1)
    take = pa.array(np.asarray(d["pos"], dtype=np.int64)[live], type=pa.int64())
    rows_snap = d["rows"] or {"slots": [], "keys": [], "key_groups": []}
    by_slot = {
        int(s): (k, g) for s, k, g in zip(rows_snap["slots"], rows_snap["keys"], rows_snap["key_groups"], strict=True)
    }
    kept_rows = [by_slot[s] for s in live.tolist() if s in by_slot]  # loop over kept rows (restore time)
    return {
        "n": len(live),
        "count": count[live],
        "key": new_key,
        "assoc": np.asarray(d["assoc"], dtype=np.int64)[live],
        "columns": [c.take(take) for c in cols],
        "row_keys": kept_rows,
        "types": d["types"],
        "append_only": bool(d.get("append_only")),
        "offset": offset,
        "ttl": d.get("ttl"),
        "old_slots": live,
    }


def rescale_join(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Regular join: the join-key index keeps the keys in range; each side keeps the live
    rows whose join key (NULL keys included, hashed as the exchange routes them) is in
    range, with their copy counts and association counts."""
    snaps = [load_state(s) for _, s in old]
    snaps = [s for s in snaps if s is not None]
    max_par = _max_parallelism(op.key_state)
    plans = plan_slots([s["keys"] for s in snaps], new_range)
    out: dict[str, Any] = {"keys": merged_keyed(plans, max_par)}
    for side, name in ((0, "left"), (1, "right")):
        parts, offset = [], 0
        for s, p in zip(snaps, plans, strict=True):
            part = _join_side(op, s[name], side, p, new_range, max_par, offset)
            offset += part["n"]
            parts.append(part)
        types = next((p["types"] for p in parts if p["types"] is not None), None)
        total = sum(p["n"] for p in parts)
        width = max((len(p["columns"]) for p in parts), default=0)
        columns = (
            [pa.concat_arrays([p["columns"][i] for p in parts if p["columns"]]) for i in range(width)] if width else []
        )
        rows = [rk for p in parts for rk in p["row_keys"]]
        append_only = all(p["append_only"] for p in parts) if parts else False
        out[name] = {
            "rows": {
                "max_parallelism": max_par,
                "slots": list(range(total)) if not append_only else [],
                "keys": [k for k, _ in rows] if not append_only else [],
                "key_groups": [int(g) for _, g in rows] if not append_only else [],
            },
            "types": types,
            "count": np.concatenate([p["count"] for p in parts]) if parts else np.zeros(0, dtype=np.int64),
            "key": np.concatenate([p["key"] for p in parts]) if parts else np.zeros(0, dtype=np.int64),
            "assoc": np.concatenate([p["assoc"] for p in parts]) if parts else np.zeros(0, dtype=np.int64),
            "pos": np.arange(total, dtype=np.int64),
            "columns": columns,
            "stored": total,
            "append_only": append_only,
            "next_slot": total,
        }
        if any(p["ttl"] is not None for p in parts):
            plans_ttl = [SimpleNamespace(old_slots=p["old_slots"]) for p in parts]
            out[name]["ttl"] = merge_ttl([p["ttl"] for p in parts], plans_ttl, op.sides[side].ttl)
        if not append_only and len(rows) != total:
            from runtime.checkpoint.restore import RestoreError

            raise RestoreError("cannot re-split the join state: a stored row has no entry in the row index")
    out["buffers"] = tuple(
        _split_buffers(op, [s["buffers"][side] for s in snaps], side, new_range, max_par) for side in (0, 1)
    )
    return pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)


def _split_buffers(
    op: Any, buffers: Sequence[list[pa.RecordBatch]], side: int, new_range: tuple[int, int], max_par: int
) -> list[pa.RecordBatch]:
    """Batch-mode buffered input rows whose join key is in the range."""
    out = []
    for b in (b for bufs in buffers for b in bufs):
        keys = [b.column(k) for k in op.keys[side]]
        keep = _in_range(_groups_of(keys, b.num_rows, max_par), new_range)
        if keep.any():
            out.append(b.filter(pa.array(keep)))
    return out


# ---------------------------------------------------------------------- interval join
def rescale_interval_join(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Interval join: each side's cached rows whose join key is in range (with their time,
    matched and valid flags); the operator watermark is the minimum over the old subtasks."""
    snaps = [load_state(s) for _, s in old]
    snaps = [s for s in snaps if s is not None]
    max_par = _max_parallelism(op.ctx.state)
    sides = []
    for side in (0, 1):
        new = type(op.sides[side])()
        for s in snaps:
            cache = s["sides"][side]
            if cache.rows is None or cache.size == 0:
                continue
            rows = cache.rows
            keys = [rows.column(k) for k in op.keys[side]]
            keep = _in_range(_groups_of(keys, rows.num_rows, max_par), new_range)
            if keep.any():
                mask = pa.array(keep)
                kept = rows.filter(mask)
                batch = kept.combine_chunks().to_batches()
                rb = pa.concat_batches(batch) if batch else pa.RecordBatch.from_pylist([], schema=kept.schema)
                new.add(rb, cache.time[keep], cache.matched[keep], cache.valid[keep])
        sides.append(new)
    wms = [int(s["wm"]) for s in snaps]
    ended = [set(s.get("ended") or ()) for s in snaps]
    return pickle.dumps(
        {
            "sides": tuple(sides),
            "wm": min(wms) if wms else op.wm,
            "ended": set.intersection(*ended) if ended else set(),
        }
    )


# ---------------------------------------------------------------------- deduplicate
def rescale_dedup(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Deduplicate: keys in range with their per-key arrays and kept rows (the row store is
    rebuilt with only those rows)."""
    snaps = [load_state(s) for _, s in old]
    snaps = [s for s in snaps if s is not None]
    plans = plan_slots([s["keys"] for s in snaps], new_range)
    arrays: list[list[np.ndarray]] = [[], [], [], []]
    stores: list[pa.Table] = []
    stored = 0
    for s, p in zip(snaps, plans, strict=True):
        taken = [take_slot_array(a, p.old_slots, "deduplicate state") for a in s["arrays"]]
        row_of = taken[3]
        has = row_of >= 0
        if has.any() and s["store"] is not None:
            stores.append(s["store"].take(pa.array(row_of[has], type=pa.int64())))
        new_row_of = np.full(len(row_of), -1, dtype=np.int64)
        new_row_of[has] = stored + np.arange(int(has.sum()), dtype=np.int64)
        stored += int(has.sum())
        taken[3] = new_row_of
        for i in range(4):
            arrays[i].append(taken[i])
    likes = [op.kept_ts, op.has_row, op.emitted, op.row_of]
    merged = tuple(concat_slot_arrays(arrays[i], likes[i]) for i in range(4))
    store = pa.concat_tables(stores).combine_chunks() if stores else None
    out = {"keys": merged_keyed(plans, _max_parallelism(op.state)), "arrays": merged, "store": store}
    if any(s.get("ttl") is not None for s in snaps):
        out["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, op.ttl)
    return pickle.dumps(out)


# ---------------------------------------------------------------------- rank
def rescale_rank(op: Any, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
    """Rank: partitions in range with their kept rows (the partition column re-numbered to
    the new slots); the arrival sequence continues after the largest old one."""
    from runtime.operators.rank import _PART

    snaps = [load_state(s) for _, s in old]
    snaps = [s for s in snaps if s is not None]
    plans = plan_slots([s["keys"] for s in snaps], new_range)
    tables = []
    for s, p in zip(snaps, plans, strict=True):
        rows = s["rows"]
        if rows is None or rows.num_rows == 0:
            continue
        idx = rows.schema.get_field_index(_PART)
        new_part = p.remap(rows.column(idx).to_numpy())
        keep = new_part >= 0
        kept = rows.filter(pa.array(keep))
        tables.append(kept.set_column(idx, _PART, pa.array(new_part[keep], type=pa.int64())))
    rows_out = pa.concat_tables(tables).combine_chunks() if tables else None
    seq = max((int(s["seq"]) for s in snaps), default=0)
    out = {"keys": merged_keyed(plans, _max_parallelism(op.state)), "rows": rows_out, "seq": seq}
    if any(s.get("ttl") is not None for s in snaps):
        out["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, op.ttl)
    return pickle.dumps(out)
