"""Deduplicate: `ROW_NUMBER() OVER (PARTITION BY k ORDER BY <time attribute>) = 1`.

Streaming, one row kept per key (slots from the keyed state backend; per-key values in
numpy arrays indexed by slot, the kept rows in an Arrow table):

- keep first, PROCTIME: the first row of a key is emitted (+I), later ones are ignored.
- keep first, ROWTIME: the earliest row of a key (ties: the first arrived) is buffered
  until the watermark reaches its rowtime, then emitted once (+I): insert-only, as Flink
  2.x does. Rows of an already emitted key, and rows behind the watermark when they
  arrive (rowtime < `__wm`), are ignored (late).
- keep last, ROWTIME: a row replaces the kept one when its rowtime is >= the kept one's
  (-U old, +U new; +I for a new key); older out-of-order rows are ignored.
- keep last, PROCTIME: every row replaces the kept one.

State TTL (`table.exec.state.ttl`, runtime/state/ttl.py): a key whose kept row was not
written for the TTL is forgotten silently; its next row is a first row again (+I). A
keep-first ROWTIME row still waiting for the watermark is not dropped (its TTL restarts).

Each batch is reduced to one candidate per key first (vectorized sort by key, time,
arrival), so the changelog has at most one change per key per batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, MAX_WATERMARK, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import (
    OldStates,
    concat_slot_arrays,
    load_state,
    max_parallelism_of,
    merge_ttl,
    merged_keyed,
    plan_slots,
    take_slot_array,
)
from runtime.errors import JobError
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import emits_update_before, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.rank import RankParams, input_names
from runtime.operators.rank_common import grow, put_kept_rows, take_rows
from runtime.operators.spec import (
    KEYED,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.operators.window_assign import rowtime_ms
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.ttl import StateTtl, now_ms, operator_ttl, state_bytes


@frozen_dataclass
class DeduplicateParams(RankParams):
    """The Rank it replaces (ROW_NUMBER, range [1, 1], one order key: the time attribute
    `order[0]`; these fields also shape the operator uid), plus `time_kind` (ROWTIME |
    PROCTIME: the order key's time attribute) and `keep_last` (ORDER BY ... DESC)."""

    time_kind: str
    keep_last: bool


class DeduplicateOperator(Operator):
    """See the module docstring."""

    checkpointing = "custom"  # key index, per-slot arrays, the kept rows

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = DeduplicateParams.of(node)
        self.keys: list[int] = list(p.partition_keys)
        self.time_index = p.order[0].index
        self.keep_last = p.keep_last
        self.rowtime = p.time_kind.upper() == "ROWTIME"
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.kept_ts = np.zeros(0, dtype=np.int64)
        self.has_row = np.zeros(0, dtype=bool)  # a row is kept (emitted, or buffered)
        self.emitted = np.zeros(0, dtype=bool)
        self.row_of = np.zeros(0, dtype=np.int64)  # slot -> row of self.store
        self.store: pa.Table | None = None
        self._ttl_ms = 0 if ctx.is_batch else operator_ttl(ctx.config, None)
        self.ttl = StateTtl(self._ttl_ms)

    def _expire(self, now: int) -> None:
        """State TTL: forget keys whose kept row was not written for the TTL."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[self.state.contains(slots) & self.has_row[slots]]
        if not len(slots):
            return
        waiting = ~self.emitted[slots] & (not self.keep_last) & self.rowtime
        self.ttl.touch(slots[waiting], now)  # not emitted yet: keep it
        slots = slots[~waiting]
        self.has_row[slots] = False
        self.emitted[slots] = False
        self.kept_ts[slots] = 0
        self.row_of[slots] = -1
        self.state.remove(slots)
        extra = self.ctx.metrics.extra
        extra["state_ttl_expired_keys"] = extra.get("state_ttl_expired_keys", 0) + len(slots)

    def state_size(self) -> dict[str, int]:
        """Keys with a kept row and approximate bytes (metrics)."""
        return {
            "keys": int(self.has_row.sum()),
            "bytes": state_bytes(self.kept_ts, self.has_row, self.emitted, self.row_of, self.store, self.ttl.last),
        }

    def _grow_state(self) -> None:
        cap = self.state.capacity
        self.kept_ts = grow(self.kept_ts, cap, 0)
        self.has_row = grow(self.has_row, cap, False)
        self.emitted = grow(self.emitted, cap, False)
        self.row_of = grow(self.row_of, cap, -1)

    def _times(self, data: pa.RecordBatch) -> np.ndarray:
        if not self.rowtime:
            return np.zeros(data.num_rows, dtype=np.int64)
        ts, _ = rowtime_ms(data.column(self.time_index), self.ctx.time_zone)
        return ts

    def _put(self, slots: np.ndarray, rows: pa.Table) -> None:
        """Store `rows` as the kept rows of `slots` (compacting the store now and then)."""
        self.store = put_kept_rows(self.store, self.row_of, self.has_row, slots, rows)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        if (row_kinds(batch) != INSERT).any():
            raise JobError("Deduplicate doesn't support consuming update and delete changes")
        now = now_ms() if self.ttl.enabled else 0
        if self.ttl.enabled:
            self._expire(now)
        slots = self.state.lookup([data.column(i) for i in self.keys], n)
        self._grow_state()
        ts = self._times(data)
        pos = np.arange(n, dtype=np.int64)
        ok = np.ones(n, dtype=bool)
        if not self.keep_last:
            ok &= ~self.emitted[slots]
            wms = row_watermarks(batch)
            if self.rowtime and wms is not None:
                late = ts < wms
                self.ctx.metrics.late_rows_dropped += int((late & ok).sum())
                ok &= ~late
        # one candidate per key: keep first = smallest (ts, arrival); keep last = largest
        cand = pos[ok]
        if len(cand) == 0:
            return
        s, t = slots[cand], ts[cand]
        order = np.lexsort((cand, t, s))
        ss = s[order]
        if self.keep_last:
            pick = np.r_[ss[1:] != ss[:-1], True]
        else:
            pick = np.r_[True, ss[1:] != ss[:-1]]
        rows = cand[order][pick]
        rs, rt = slots[rows], ts[rows]
        had = self.has_row[rs]
        if self.keep_last:
            better = ~had | (rt >= self.kept_ts[rs]) if self.rowtime else np.ones(len(rows), dtype=bool)
        else:
            better = ~had | (rt < self.kept_ts[rs])
        rows, rs, rt, had = rows[better], rs[better], rt[better], had[better]
        if len(rows) == 0:
            return
        rows = rows[np.argsort(rows, kind="stable")]  # arrival order
        rs, rt = slots[rows], ts[rows]
        had = self.has_row[rs]
        new_rows = pa.Table.from_arrays(take_rows(data, rows), names=data.schema.names)
        if self.keep_last:
            old_cols = None
            if had.any():
                assert self.store is not None
                old_cols = take_rows(self.store, self.row_of[rs[had]])
            self._emit_updates(new_rows, had, old_cols, out)
        self.kept_ts[rs] = rt
        self.has_row[rs] = True
        self.ttl.touch(rs, now)
        self._put(rs, new_rows)
        if not self.keep_last and not self.rowtime:
            self.emitted[rs] = True
            out.emit(make_batch(self.node, list(new_rows.columns), np.zeros(len(rows), dtype=np.int8)))

    def _emit_updates(self, new_rows: pa.Table, had: np.ndarray, old_cols: list[pa.Array] | None, out: Output) -> None:
        """-U old / +U new for keys that had a row, +I for new keys (arrival order)."""
        n = new_rows.num_rows
        new_cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in new_rows.columns]
        if old_cols is None:
            out.emit(make_batch(self.node, new_cols, np.zeros(n, dtype=np.int8)))
            return
        if not emits_update_before(self.node):  # no consumer wants -U: +U / +I alone
            out.emit(make_batch(self.node, new_cols, np.where(had, UPDATE_AFTER, INSERT).astype(np.int8)))
            return
        # interleave: for row i with an old row, -U old then +U new
        k = int(had.sum())
        order_key = np.concatenate([np.flatnonzero(had) * 2, np.arange(n) * 2 + 1])
        order = pa.array(np.argsort(order_key, kind="stable"), pa.int64())
        cols = [pa.concat_arrays([o, c]).take(order) for o, c in zip(old_cols, new_cols, strict=True)]
        kinds = np.concatenate([np.full(k, UPDATE_BEFORE), np.where(had, UPDATE_AFTER, INSERT)])
        out.emit(make_batch(self.node, cols, kinds[order.to_numpy()].astype(np.int8)))

    # ------------------------------------------------------------------ keep-first rowtime
    def on_watermark(self, watermark: int, out: Output) -> None:
        self._fire(watermark, out)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        self._fire(MAX_WATERMARK, out)

    def _fire(self, watermark: int, out: Output) -> None:
        if self.keep_last or not self.rowtime or self.store is None:
            return
        due = np.flatnonzero(self.has_row & ~self.emitted)
        due = due[self.kept_ts[due] <= watermark]
        if len(due) == 0:
            return
        due = due[np.lexsort((self.row_of[due], self.kept_ts[due]))]
        cols = take_rows(self.store, self.row_of[due])
        self.emitted[due] = True
        out.emit(make_batch(self.node, cols, np.zeros(len(due), dtype=np.int8)))

    # ------------------------------------------------------------------ checkpoints
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
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
        likes = [self.kept_ts, self.has_row, self.emitted, self.row_of]
        merged = tuple(concat_slot_arrays(arrays[i], likes[i]) for i in range(4))
        store = pa.concat_tables(stores).combine_chunks() if stores else None
        out = {"keys": merged_keyed(plans, max_parallelism_of(self.state)), "arrays": merged, "store": store}
        if any(s.get("ttl") is not None for s in snaps):
            out["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, self.ttl)
        return state_format.pack(out)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack(
            {
                "keys": self.state.snapshot(),
                "arrays": (self.kept_ts, self.has_row, self.emitted, self.row_of),
                "store": self.store,
                "ttl": self.ttl,
            }
        )

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.state.restore(d["keys"])
        self.kept_ts, self.has_row, self.emitted, self.row_of = d["arrays"]
        self.store = d["store"]
        self.ttl = d.get("ttl") or StateTtl(self._ttl_ms)
        self.ttl.reconfigure(self._ttl_ms)


class DeduplicateSpec(OperatorSpec[DeduplicateParams]):
    """Keep the first / last row per key on a time attribute (see the module docstring)."""

    name = "Deduplicate"
    params_type = DeduplicateParams
    operator_class = DeduplicateOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: ROW_NUMBER over the time attribute (ties among different rows fail the job, as for Rank). "
        "Streaming: `dropDuplicatesWithinWatermark` keeps the first row to *arrive* and forgets a key once the "
        "watermark passes, Flink keeps the smallest rowtime for good: refused.",
    )

    def input_keys(self, params: DeduplicateParams, input_index: int) -> tuple[int, ...]:
        return params.partition_keys

    drops_update_before = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if any(i.changelog_mode != "I" for i in inputs):
            raise PlanRefusedError(f"{self.name} doesn't support consuming update and delete changes")
        return "I,UB,UA" if self.params(node).keep_last else "I"

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """One row per partition key."""
        return frozenset({frozenset(self.params(node).partition_keys)})

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = input_names(node)
        return [
            f"keep=[{'LastRow' if p.keep_last else 'FirstRow'}]",
            f"key=[{', '.join(names[k] for k in p.partition_keys)}]",
            f"order=[{p.time_kind}]",
        ]


DEDUPLICATE = register_spec(DeduplicateSpec())
