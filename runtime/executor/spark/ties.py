"""Ties the local runner breaks by arrival order, checked inside Spark (stateful.py).

The local runner, like Flink, orders rows with equal sort keys by arrival. Rows reach a
Spark processor in another order (per task, per key group, per micro-batch), so where such
a tie among rows that differ decides the result, the job fails naming the operator instead
of giving another answer. Ties among equal rows never matter (any order gives the same
rows), nor ties the operator resolves by peers (RANK, DENSE_RANK, RANGE frames).

- ROW_NUMBER Top-N (`Rank`): rows with equal partition and ORDER BY keys, among the held
  rows and a batch's new ones, whose tie straddles the kept range (or lies in it, with the
  row number in the output). Checked before each batch (`batch_tie`).
- Rowtime deduplication (`Deduplicate`): rows of one key at the kept rowtime (the smallest
  for keep-first, the largest for keep-last), among the kept row and a batch's new ones.
  Checked before each batch (`batch_tie`).
- Window Top-N / deduplication (`WindowRank`, `WindowDeduplicate`, ROW_NUMBER): as Top-N,
  over the rows of the windows about to fire. Checked before the watermark fires them
  (`fire_tie`).
- Rowtime OVER (`OverAggregate`) with a ROWS frame or an order-sensitive function
  (ROW_NUMBER, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, LISTAGG ...): rows of one
  partition with equal timestamps firing together. Checked before they fire (`fire_tie`).
- OVER in recompute mode over an insert-only input (an ORDER BY that is no time attribute,
  runtime/operators/over_updating.py), as sensitive: rows of one partition with equal ORDER
  BY values, among the live rows and a batch's new ones. Checked before each batch (`batch_tie`).
  Over an updating input it is not checked: a batch's -U and +U rows share their ORDER BY
  values, and telling a real tie from that needs the retractions applied first (not done).

Retractions in a batch are not applied first: a tie they would remove is still refused.

The processor runs these checks only for a key group whose rows came from more than one
origin (stateful.Packer / `Held.note_origin`). Rows that one Spark task read straight from a
source file (streaming.ordered_input) reach the processor in the file's order, which is the
order the local runner reads them in, so their ties are broken the same way on both runners.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, UPDATE_AFTER, data_columns, row_kinds, row_watermarks
from runtime.operators.over import SLOT, TS, WM, OverAggregateOperator, _concat
from runtime.operators.over_updating import SLOT as UPDATING_SLOT
from runtime.operators.rank import _PART, RankOperator
from runtime.operators.rank_common import SortKey, rank_numbers, take_rows
from runtime.operators.rank_dedup import DeduplicateOperator
from runtime.operators.rank_window import WindowRankOperator
from runtime.state.backend import encode_rows
from runtime.state.keygroups import hash_rows

# Aggregates whose value is the order rows arrive in (JSON_ARRAYAGG lists the values and
# JSON_OBJECTAGG the keys in the order they arrived): refused in STREAMING as aggregates
# (capabilities.py), and make an OVER sensitive to ties.
ARRIVAL_ORDER_AGGS = {"listagg", "first_value", "last_value", "collect", "array_agg", "json_arrayagg", "json_objectagg"}
# OVER functions that number or reach rows by position: ties among different rows decide them.
TIE_BREAK_CALLS = {"row_number", "ntile", "lag", "lead"}

_REFUSAL = (
    "the local runner breaks such ties by arrival order, which Spark does not define, so the Spark runner "
    "refuses rather than give a different result"
)


def _refusal(op: Any, what: str) -> str:
    return f"{op.node.operator} (node {op.node.id}): {what}; {_REFUSAL}"


def _differ(cols: Sequence[pa.Array], rows: np.ndarray, groups: np.ndarray) -> bool:
    """Whether some group (ids `groups`, one per row of `rows`) holds rows of `cols` that differ."""
    if len(rows) < 2:
        return False
    take = pa.array(rows, pa.int64())
    try:
        hashes = hash_rows([c.take(take) for c in cols], len(rows))
    except (TypeError, ValueError, pa.ArrowException):  # a type the row hash does not cover
        hashes = np.arange(len(rows))  # every row counts as different: refused
    pairs = np.unique(np.stack([np.asarray(groups, np.int64), hashes.astype(np.int64)]), axis=1)
    return len(np.unique(pairs[0])) != pairs.shape[1]


def straddling_tie(
    cols: Sequence[pa.Array], order: Sequence[SortKey], part: np.ndarray, start: int, end: int, output_rank: bool
) -> bool:
    """Whether ROW_NUMBER over `cols` (partitions `part`, ORDER BY `order`) meets rows with
    equal partition and order keys that differ and whose tie straddles [start, end] (or
    touches it when the row number is output)."""
    if len(part) < 2:
        return False
    seq = np.arange(len(part), dtype=np.int64)
    idx, _ = rank_numbers(list(cols), order, "ROW_NUMBER", part, seq)
    _, rk = rank_numbers(list(cols), order, "RANK", part, seq)
    ps = part[idx]
    new_group = np.r_[True, (ps[1:] != ps[:-1]) | (rk[1:] != rk[:-1])]
    gid = np.cumsum(new_group) - 1
    size = np.bincount(gid)[gid]
    last = rk + size - 1  # the row numbers a tie group spans: rk .. last
    touches = (last >= start) & (rk <= end)
    straddles = touches & ((rk < start) | (last > end))
    risky = (size > 1) & (straddles | (touches & output_rank))
    if not risky.any():
        return False
    rows = np.flatnonzero(risky)
    return _differ(cols, idx[rows], gid[rows])


def _group_ids(op: Any, keys: list[pa.Array], n: int) -> tuple[np.ndarray, np.ndarray]:
    """(group id per row, slot per row or -1): a key's slot, or ids below -1 for keys not in state."""
    slots = op.state.lookup(keys, n, create=False) if keys else np.zeros(n, dtype=np.int64)
    slots = np.asarray(slots, dtype=np.int64)
    part = slots.copy()
    new = part < 0
    if new.any():
        _, inverse = np.unique(hash_rows(keys, n)[new] if keys else np.zeros(int(new.sum())), return_inverse=True)
        part[new] = -2 - inverse.reshape(-1)
    return part, slots


def batch_tie(op: Any, batch: pa.RecordBatch) -> str | None:
    """Why applying `batch` to `op` would depend on arrival order (None: it cannot)."""
    if op.ctx.is_batch:
        return None
    if isinstance(op, RankOperator) and op.rank_type == "ROW_NUMBER":
        return _rank_tie(op, batch)
    if isinstance(op, DeduplicateOperator) and op.rowtime:
        return _dedup_tie(op, batch)
    if isinstance(op, OverAggregateOperator) and _over_sensitive(op) and _recomputes_inserts(op, batch):
        return _updating_over_tie(op, batch)
    return None


def _recomputes_inserts(op: OverAggregateOperator, batch: pa.RecordBatch) -> bool:
    """Whether `op` is in recompute mode over an insert-only input (see the module doc)."""
    may_retract = any(m != "I" for m in (op.input_changelog_modes or ()))
    return op.updating is not None and not may_retract and not bool((row_kinds(batch) != 0).any())


def _updating_over_tie(op: OverAggregateOperator, batch: pa.RecordBatch) -> str | None:
    """Rows of one partition with equal ORDER BY values that differ, among the live rows and
    the batch's new ones: recompute mode numbers them by arrival (over_updating.py)."""
    data = _adds(batch)
    if data is None:
        return None
    n = data.num_rows
    part, _ = _group_ids(op, [data.column(i) for i in op.partition], n)
    cols = [data.column(i) for i in range(op.width)]
    live = op.updating.live if op.updating is not None else None
    if live is not None and live.num_rows:
        cols, part = _with_held(live, UPDATING_SLOT, cols, part)
    if len(part) < 2:
        return None
    group, _ = encode_rows([pa.array(part), *(cols[k.index] for k in op.order)], len(part))
    group = np.asarray(group)
    tied = np.bincount(group)[group] > 1
    if not tied.any() or not _differ(cols, np.flatnonzero(tied), group[tied]):
        return None
    return _refusal(op, "rows of one partition with equal ORDER BY values that differ are numbered by arrival")


def _with_held(
    held_rows: pa.Table, part_column: str, cols: list[pa.Array], part: np.ndarray
) -> tuple[list[pa.Array], np.ndarray]:
    """The batch's columns and partition ids with the rows the operator already holds for
    the batch's partitions in front (held rows are older: they come first in arrival
    order). `part_column` is the held table's partition-id column; the batch's columns
    take the held columns' types."""
    held = held_rows.filter(pa.array(np.isin(held_rows.column(part_column).to_numpy(), part)))
    merged = [pa.concat_arrays([*held.column(i).chunks, c.cast(held.schema.field(i).type)]) for i, c in enumerate(cols)]
    return merged, np.concatenate([held.column(part_column).to_numpy(), part])


def _adds(batch: pa.RecordBatch) -> pa.RecordBatch | None:
    kinds = row_kinds(batch)
    adds = (kinds == INSERT) | (kinds == UPDATE_AFTER)
    if not adds.any():
        return None
    return data_columns(batch).filter(pa.array(adds))


def _rank_tie(op: RankOperator, batch: pa.RecordBatch) -> str | None:
    data = _adds(batch)
    if data is None:
        return None
    n = data.num_rows
    part, _ = _group_ids(op, [data.column(i) for i in op.partition_keys], n)
    cols = [data.column(i) for i in range(data.num_columns)]
    if op.rows is not None and op.rows.num_rows:
        cols, part = _with_held(op.rows, _PART, cols, part)
    if not straddling_tie(cols, op.order, part, op.start, op.end, op.output_rank):
        return None
    return _refusal(
        op, "rows with equal sort keys that differ straddle the kept range (or carry different row numbers)"
    )


def _dedup_tie(op: DeduplicateOperator, batch: pa.RecordBatch) -> str | None:
    """Rows of one key at the rowtime deduplication keeps (the smallest for keep-first, the
    largest for keep-last), among the batch's rows that compete and the kept row, that differ."""
    data = _adds(batch)
    if data is None:
        return None
    n = data.num_rows
    part, slots = _group_ids(op, [data.column(i) for i in op.keys], n)
    ts = op._times(data)
    known = slots >= 0
    live = np.zeros(n, dtype=bool)
    live[known] = op.has_row[slots[known]] if len(op.has_row) else False
    compete = np.ones(n, dtype=bool)
    if not op.keep_last:  # emitted keys and late rows are ignored
        emitted = np.zeros(n, dtype=bool)
        emitted[known] = op.emitted[slots[known]] if len(op.emitted) else False
        compete &= ~emitted
        wms = row_watermarks(batch)
        if wms is not None:
            kinds = row_kinds(batch)
            compete &= ~(ts < wms[(kinds == INSERT) | (kinds == UPDATE_AFTER)])
    if compete.sum() + int(live.any()) < 2:
        return None
    rows = np.flatnonzero(compete)
    cols = [c.take(pa.array(rows, pa.int64())) for c in data.columns]
    group, times = part[rows], ts[rows]
    held = np.unique(slots[compete & live])
    if len(held) and op.store is not None:
        stored = take_rows(op.store, op.row_of[held])
        cols = [pa.concat_arrays([s, c]) for s, c in zip(stored, cols, strict=True)]
        group = np.concatenate([held, group])
        times = np.concatenate([op.kept_ts[held], times])
    # the kept rowtime per group, and the rows at it
    order = np.lexsort((times, group))
    g, t = group[order], times[order]
    first = np.r_[True, g[1:] != g[:-1]]
    last = np.r_[g[1:] != g[:-1], True]
    pick = last if op.keep_last else first
    best = np.repeat(t[pick], np.diff(np.r_[np.flatnonzero(first), len(g)]))
    at_best = order[t == best]
    if not _differ(cols, at_best, group[at_best]):
        return None
    return _refusal(op, "rows of one key that differ have the rowtime the deduplication keeps")


def fire_tie(op: Any, watermark: int) -> str | None:
    """Why firing `op` at `watermark` would depend on arrival order (None: it cannot)."""
    if op.ctx.is_batch:
        return None
    if isinstance(op, WindowRankOperator) and op.rank_type == "ROW_NUMBER":
        return _window_rank_tie(op, watermark)
    if isinstance(op, OverAggregateOperator) and op.updating is None:
        return _over_tie(op, watermark)
    return None


def _window_rank_tie(op: WindowRankOperator, watermark: int) -> str | None:
    if not op.buffer:
        return None
    due = np.concatenate(op.ends) - 1 <= watermark
    if due.sum() < 2:
        return None
    table = pa.Table.from_batches(op.buffer).combine_chunks().filter(pa.array(due))
    cols = [table.column(i).combine_chunks() for i in range(table.num_columns)]
    part, _ = encode_rows([cols[i] for i in op.partition_keys], table.num_rows)
    if not straddling_tie(cols, op.order, np.asarray(part), op.start, op.end, op.output_rank):
        return None
    return _refusal(op, "rows of a window with equal sort keys that differ straddle the kept range")


def _over_sensitive(op: OverAggregateOperator) -> bool:
    frame = op.frame
    whole = frame.lower is None and frame.upper is None
    if frame.kind == "ROWS" and not whole:
        return True
    return any(c.name in TIE_BREAK_CALLS or c.name in ARRIVAL_ORDER_AGGS for c in op.calls)


def _over_tie(op: OverAggregateOperator, watermark: int) -> str | None:
    if not op.pending or not _over_sensitive(op):
        return None
    pending = _concat(op.pending)
    ts = pending.column(TS).to_numpy()
    ready = (ts <= watermark) & (pending.column(WM).to_numpy() < watermark)
    if ready.sum() < 2:
        return None
    rows = np.flatnonzero(ready)
    slots = pending.column(SLOT).to_numpy()[rows]
    group, _ = encode_rows([pa.array(slots), pa.array(ts[rows])], len(rows))
    group = np.asarray(group)
    counts = np.bincount(group)
    tied = counts[group] > 1
    if not tied.any():
        return None
    cols = [pending.column(i).combine_chunks() for i in range(op.width)]
    if not _differ(cols, rows[tied], group[tied]):
        return None
    return _refusal(op, "rows of one partition with equal timestamps that differ fire together")
