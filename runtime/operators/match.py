"""Match: MATCH_RECOGNIZE, ONE ROW PER MATCH (Flink's StreamExecMatch / CepOperator).

Rows are kept in a store (Arrow batches, addressed by a running id). STREAMING with a
rowtime ORDER BY: rows wait until the watermark passes their timestamp, then are
processed in (partition, ORDER BY, arrival) order; a row at or below the watermark in
effect when it arrived is late and dropped (`metrics.late_rows_dropped`), as Flink's CEP
operator drops it. With a proctime ORDER BY rows are processed on arrival. BATCH: all rows
are processed at `end_input`. Output is insert-only: partition columns, then measures.

BATCH past `taskmanager.memory.managed.size`: the rows go through the external merge sort
of the BATCH operators (`ExternalSort`) by (partition keys, ORDER BY keys, arrival); the
merged rows are cut where a partition starts and a few complete partitions (a quarter of
the bound, or 65,536 rows) are stored and processed at a time, then forgotten, so the
operator holds about the bound plus the largest partition (a partition larger than the
bound, or a MATCH_RECOGNIZE without PARTITION BY, is held whole). Each partition's rows are
processed in the same order by the same automaton: the matches are the in-memory ones, only
their order differs (partition key order). With periodic checkpoints the rows are held (the
snapshot) and do not spill.

The automaton and navigation are in `runtime.operators.match_nfa`; the loop over
partitions of one flush and over each partition's rows is in Python (see there).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import MIN_WATERMARK, data_columns, row_watermarks
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import (
    OldStates,
    exchange_keys,
    key_group_zero_state,
    load_state,
    max_parallelism_of,
    merged_keyed,
    owned_rows,
    plan_slots,
    renumber,
)
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.external_sort import ExternalSort
from runtime.operators.match_nfa import MatchSlot, Navigator, PartitionState, PatternElement, PatternMatcher, Thread
from runtime.operators.rank_common import SortKey, _plain, _same_adjacent
from runtime.operators.spec import (
    KEYED,
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    register_spec,
)
from runtime.plan_text import format_expr
from runtime.spill import MANAGED_MEMORY_SIZE
from runtime.state import KeyedStateBackend, create_backend

_COMPACT_ROWS = 4096
# BATCH past the bound: rows of complete partitions processed at once (or a quarter of the bound).
_SPILLED_CHUNK_ROWS = 1 << 16


def _as_int64(arr: pa.Array) -> np.ndarray:
    """Timestamps (any unit) as int64 ms since epoch; NULL as the minimum int64."""
    t = arr.type
    if pa.types.is_timestamp(t):
        arr = arr.cast(pa.timestamp("ms", tz=t.tz)).cast(pa.int64())
    elif not pa.types.is_integer(t):
        arr = arr.cast(pa.int64())
    return np.asarray(pc.fill_null(arr.cast(pa.int64()), np.iinfo(np.int64).min).to_numpy(zero_copy_only=False))


@frozen_dataclass
class MatchOrderKey:
    """An ORDER BY key of MATCH_RECOGNIZE (the first is the time attribute)."""

    index: int
    desc: bool


@frozen_dataclass
class MatchAfter:
    """AFTER MATCH SKIP: `kind` PAST_LAST_ROW | TO_NEXT_ROW | TO_FIRST | TO_LAST (`var`)."""

    kind: str
    var: str | None = None


@frozen_dataclass
class MatchParams(OperatorParams):
    """MATCH_RECOGNIZE, ONE ROW PER MATCH: rows of each partition (`partition_keys`) in
    `order_keys` order (the first one the time attribute `time_index`, a proctime when
    `proctime`) are matched against `pattern`; `define` (variable, condition) and
    `measures` are IR over the extended row (the input's columns, then the navigation
    `slots`); `after` the skip strategy; `within_ms` the WITHIN interval."""

    partition_keys: tuple[int, ...]
    order_keys: tuple[MatchOrderKey, ...]
    time_index: int | None
    proctime: bool
    pattern: tuple[PatternElement, ...]
    define: tuple[tuple[str, Expr], ...]
    measures: tuple[Expr, ...]
    slots: tuple[MatchSlot, ...]
    after: MatchAfter
    within_ms: int | None = None
    rows_per_match: str = "ONE"


class MatchOperator(Operator):
    checkpointing = "custom"  # partition index, NFA threads, row store, pending rows
    watermark_attributes = ("watermark",)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = MatchParams.of(node)
        self.partition_keys: list[int] = list(p.partition_keys)
        self.order_keys: list[MatchOrderKey] = list(p.order_keys)
        assert p.time_index is not None, "MATCH_RECOGNIZE orders by a time attribute"
        self.time_index: int = p.time_index
        self.proctime = p.proctime and not ctx.is_batch
        self.pattern = list(p.pattern)
        self.define: dict[str, Expr] = dict(p.define)
        self.measures = list(p.measures)
        self.slots = list(p.slots)
        self.after = (p.after.kind, p.after.var)
        self.within = p.within_ms
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.parts: dict[int, PartitionState] = {}
        self.batches: list[pa.RecordBatch] = []
        self.base = 0  # store id of the first stored row
        self.size = 0  # rows stored
        self.pending_ids = np.zeros(0, dtype=np.int64)
        self.pending_ts = np.zeros(0, dtype=np.int64)
        self.pending_part = np.zeros(0, dtype=np.int64)
        self.watermark = MIN_WATERMARK
        self.matcher: PatternMatcher | None = None
        self.n_cols = 0
        # BATCH: the rows sorted by (partition, ORDER BY, arrival), on disk past the bound
        # (with checkpointing the store holds them: the snapshot)
        self.sorter: ExternalSort | None = None
        if ctx.is_batch and not ctx.checkpointing:
            order = [SortKey(i) for i in self.partition_keys]
            order += [SortKey(k.index, k.desc, nulls_first=False) for k in self.order_keys]
            self.sorter = ExternalSort(ctx.config, order, MANAGED_MEMORY_SIZE.get(ctx.config))

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        ts = _as_int64(data.column(self.time_index)) if not self.proctime else np.zeros(data.num_rows, np.int64)
        keep = ts != np.iinfo(np.int64).min if not self.proctime else np.ones(data.num_rows, dtype=bool)
        if not self.ctx.is_batch and not self.proctime:
            wms = row_watermarks(batch)
            wm = wms if wms is not None else np.full(data.num_rows, self.watermark, dtype=np.int64)
            late = keep & (ts <= wm)
            self.ctx.metrics.late_rows_dropped += int(late.sum())
            keep &= ~late
        if not keep.all():
            data = data.filter(pa.array(keep))
            ts = ts[keep]
        if data.num_rows == 0:
            return
        if self.sorter is not None:
            self.n_cols = data.num_columns
            self.sorter.add(data)
            return
        self._take(data, ts, out)

    def _take(self, data: pa.RecordBatch, ts: np.ndarray, out: Output) -> None:
        """Store rows (rowtimes `ts`): processed at once with a proctime, else pending."""
        ids, part = self._stored(data)
        if self.proctime:
            self._process(ids, ts, part, out)
            return
        self.pending_ids = np.concatenate([self.pending_ids, ids])
        self.pending_ts = np.concatenate([self.pending_ts, ts])
        self.pending_part = np.concatenate([self.pending_part, part])

    def _stored(self, data: pa.RecordBatch) -> tuple[np.ndarray, np.ndarray]:
        """Append rows to the store: (their store ids, their partitions' slots)."""
        n = data.num_rows
        self._ensure_matcher(data.num_columns)
        if self.partition_keys:
            part = np.asarray(self.state.lookup([data.column(i) for i in self.partition_keys], n), dtype=np.int64)
        else:
            part = np.zeros(n, dtype=np.int64)
        ids = np.arange(self.base + self.size, self.base + self.size + n, dtype=np.int64)
        self.batches.append(data)
        self.size += n
        return ids, part

    def _unsort(self, out: Output) -> None:
        """BATCH, nothing spilled: the sorted rows to the store in arrival order (before a
        snapshot, after a restore, at the end of input); from then on rows go there."""
        sorter, self.sorter = self.sorter, None
        if sorter is None:
            return
        sorter.snapshot()  # spilled: refused with a hint
        table = sorter.take_buffer()
        sorter.close()
        for batch in [] if table is None else table.to_batches():
            self._take(batch, _as_int64(batch.column(self.time_index)), out)

    def _spilled(self) -> Iterator[pa.RecordBatch]:
        """BATCH past the bound: the merged rows cut at partition starts; complete partitions
        stored and processed a few at a time, then forgotten (module docstring)."""
        sorter = self.sorter
        assert sorter is not None
        width = sorter.width
        limit = max(sorter.bound // 4, 1)
        ready: list[pa.Table] = []  # complete partitions not processed yet
        ready_rows = ready_bytes = 0
        tail: pa.Table | None = None  # the partition the merge is in
        buffer = Output()
        for piece in sorter.merged():
            probe = piece.select(range(width)) if tail is None else pa.concat_tables([tail, piece.select(range(width))])
            same = np.ones(probe.num_rows, dtype=bool)
            for i in self.partition_keys:
                same &= _same_adjacent(_plain(probe.column(i)))
            same[0] = False
            starts = np.flatnonzero(~same)
            cut = int(starts[-1])
            tail = probe.slice(cut)
            if cut:
                ready.append(probe.slice(0, cut))
                ready_rows += cut
                ready_bytes += ready[-1].nbytes
            if ready_rows >= _SPILLED_CHUNK_ROWS or ready_bytes >= limit:
                yield from self._process_partitions(ready, buffer)
                ready, ready_rows, ready_bytes = [], 0, 0
        if tail is not None:
            ready.append(tail)
        if ready:
            yield from self._process_partitions(ready, buffer)
        sorter.close()

    def _process_partitions(self, tables: list[pa.Table], buffer: Output) -> Iterator[pa.RecordBatch]:
        """Store and process these rows of complete partitions (sorted: their store ids
        follow the (ORDER BY, arrival) order), then forget the partitions and their rows."""
        table = pa.concat_tables(tables).combine_chunks()
        ids: list[np.ndarray] = []
        part: list[np.ndarray] = []
        for batch in table.to_batches():
            i, p = self._stored(batch)
            ids.append(i)
            part.append(p)
        slots = np.concatenate(part)
        self._process(np.concatenate(ids), _as_int64(table.column(self.time_index)), slots, buffer)
        done = np.unique(slots)
        for slot in done.tolist():  # a loop over the partitions (their automaton states are objects)
            self.parts.pop(slot, None)
        if self.partition_keys:
            self.state.remove(done)
        self._compact()
        yield from buffer.drain()[0]

    def _ensure_matcher(self, n_cols: int) -> None:
        if self.matcher is None:
            self.n_cols = n_cols
            nav = Navigator(self.pattern, self.slots, n_cols)
            self.matcher = PatternMatcher(self.pattern, self.define, nav, self.after, self.within)

    def on_watermark(self, watermark: int, out: Output) -> None:
        if not self.ctx.is_batch and not self.proctime:
            self._flush(self.pending_ts <= watermark, out)
        self.watermark = watermark
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        if self.sorter is not None and self.sorter.spilled:
            out.emit_later(self._spilled())
            return
        self._unsort(out)
        if self.ctx.is_batch or len(self.pending_ids):
            self._flush(np.ones(len(self.pending_ids), dtype=bool), out)

    def close(self) -> None:
        """Remove the BATCH sort's spill directory (also when the job failed)."""
        if self.sorter is not None:
            self.sorter.close()
        super().close()

    # ------------------------------------------------------------------ processing
    def _store(self) -> pa.Table:
        table = pa.Table.from_batches(self.batches) if self.batches else None
        if table is not None and len(self.batches) > 1:
            table = table.combine_chunks()
            self.batches = table.to_batches() or self.batches
        assert table is not None
        return table

    def _flush(self, mask: np.ndarray, out: Output) -> None:
        if not mask.any():
            return
        ids, ts, part = self.pending_ids[mask], self.pending_ts[mask], self.pending_part[mask]
        keep = ~mask
        self.pending_ids, self.pending_ts, self.pending_part = (
            self.pending_ids[keep],
            self.pending_ts[keep],
            self.pending_part[keep],
        )
        self._process(ids, ts, part, out)

    def _order(self, ids: np.ndarray, ts: np.ndarray, part: np.ndarray, store: pa.Table) -> np.ndarray:
        """Positions of the rows in (partition, ORDER BY..., arrival) order."""
        cols: dict[str, Any] = {"p": part, "t": ts}
        keys: list[tuple[str, str]] = [("p", "ascending"), ("t", "ascending")]
        rel = pa.array(ids - self.base)
        for j, k in enumerate(self.order_keys[1:]):
            cols[f"k{j}"] = store.column(k.index).take(rel)
            keys.append((f"k{j}", "descending" if k.desc else "ascending"))
        cols["id"] = ids
        keys.append(("id", "ascending"))
        table = pa.table(cols)
        return np.asarray(pc.sort_indices(table, sort_keys=keys).to_numpy())

    def _process(self, ids: np.ndarray, ts: np.ndarray, part: np.ndarray, out: Output) -> None:
        assert self.matcher is not None
        store = self._store()
        nav = self.matcher.nav
        nav.store, nav.base = store, self.base
        order = self._order(ids, ts, part, store)
        ids, ts, part = ids[order], ts[order], part[order]
        ctx = eval_context(self.ctx, len(ids))
        bounds = np.flatnonzero(np.diff(part)) + 1
        starts = np.concatenate([[0], bounds]).astype(np.int64)
        ends = np.concatenate([bounds, [len(ids)]]).astype(np.int64)
        self.matcher.precompute(ids, self._prev_ids(ids, part, starts, ends), ctx)
        matches: list[Thread] = []
        for s, e in zip(starts, ends, strict=True):  # loop over the partitions of this flush
            ps = self.parts.setdefault(int(part[s]), PartitionState())
            for pos in range(int(s), int(e)):  # the NFA is sequential within a partition
                matches.extend(self.matcher.step(ps, int(ids[pos]), int(ts[pos]), pos, ctx))
        if matches:
            self._emit(matches, out)
        self._compact()

    def _prev_ids(
        self, ids: np.ndarray, part: np.ndarray, starts: np.ndarray, ends: np.ndarray
    ) -> dict[int, np.ndarray]:
        """For k = 1..max PREV offset: the store id of each row's k-th predecessor in its
        partition (earlier flushes included, through each partition's history); -1 = none.
        Updates the histories. Loops over the partitions of the flush only."""
        assert self.matcher is not None
        kmax = self.matcher.max_prev
        out = {k: np.full(len(ids), -1, dtype=np.int64) for k in range(1, kmax + 1)}
        if kmax == 0:
            return out
        for s, e in zip(starts, ends, strict=True):
            ps = self.parts.setdefault(int(part[s]), PartitionState())
            seq = np.concatenate([np.asarray(ps.history, dtype=np.int64), ids[s:e]])
            h = len(ps.history)
            for k in range(1, kmax + 1):
                src = np.arange(h, h + e - s) - k
                ok = src >= 0
                out[k][s:e][ok] = seq[src[ok]]
            ps.history = seq[-kmax:].tolist()
        return out

    def _emit(self, matches: list[Thread], out: Output) -> None:
        assert self.matcher is not None
        nav = self.matcher.nav
        last = np.asarray([m.rows[-1] for m in matches], dtype=np.int64)
        seqs = [(m.rows, m.labels) for m in matches]
        ctx = eval_context(self.ctx, len(matches))
        cols = [nav._take(i, last) for i in self.partition_keys]  # noqa: SLF001 - same package
        cols += [nav.evaluate(e, last, seqs, ctx) for e in self.measures]
        wm = np.full(len(matches), self.watermark, dtype=np.int64)
        out.emit(make_batch(self.node, cols, None, None if self.ctx.is_batch else wm))

    def _compact(self) -> None:
        """Drop stored rows no pending row or partial match references any more."""
        assert self.matcher is not None
        low = self.matcher.referenced_rows(list(self.parts.values()))
        if len(self.pending_ids):
            p = int(self.pending_ids.min())
            low = p if low is None else min(low, p)
        if low is None:
            low = self.base + self.size
        drop = low - self.base
        if drop < _COMPACT_ROWS or drop * 2 < self.size:
            return
        store = self._store().slice(drop)
        self.batches = store.combine_chunks().to_batches()
        self.base += drop
        self.size -= drop

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._unsort(Output())  # BATCH sorted rows (a hand-taken savepoint) to the store
        return state_format.pack(
            {
                "keys": self.state.snapshot(),
                "parts": self.parts,
                "batches": self.batches,
                "base": self.base,
                "size": self.size,
                "pending": (self.pending_ids, self.pending_ts, self.pending_part),
                "watermark": self.watermark,
                "n_cols": self.n_cols,
            }
        )

    def restore_state(self, handles: Any) -> None:
        if handles is None:  # a subtask that owns none of an unpartitioned match's rows
            return
        d = state_format.unpack(handles)
        self.state.restore(d["keys"])
        self.parts = d["parts"]
        self.batches = d["batches"]
        self.base, self.size = d["base"], d["size"]
        self.pending_ids, self.pending_ts, self.pending_part = d["pending"]
        self.watermark = d["watermark"]
        if d["n_cols"]:
            self._ensure_matcher(d["n_cols"])
        self._unsort(Output())  # the restored store holds rows: the rest joins it in memory

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The partitions whose key (PARTITION BY, the exchange key) is in range: their
        slots re-numbered densely, their stored rows gathered into one store numbered
        from 0 (old subtask by old subtask, so the arrival order within a partition
        holds), and the store ids in their partial matches, PREV histories and pending
        rows re-numbered with them. No PARTITION BY: every row went to key group 0,
        whose new owner takes its old owner's state unchanged."""
        if not self.partition_keys:
            return key_group_zero_state(old, new_range)
        snaps = [d for d in (load_state(s) for _, s in old) if d is not None]
        plans = plan_slots([d["keys"] for d in snaps], new_range)
        max_par = max_parallelism_of(self.state)
        parts: dict[int, PartitionState] = {}
        batches: list[pa.RecordBatch] = []
        pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        size, n_cols = 0, 0
        for d, plan in zip(snaps, plans, strict=True):
            n_cols = n_cols or int(d["n_cols"])
            store = pa.Table.from_batches(d["batches"]).combine_chunks() if d["batches"] else None
            keep = owned_rows(store, exchange_keys(self), new_range, max_par)
            ids = np.full(len(keep), -1, dtype=np.int64)  # old id - base -> new id
            ids[keep] = size + np.arange(int(keep.sum()), dtype=np.int64)
            if store is not None and keep.any():
                batches.extend(store.filter(pa.array(keep)).to_batches())
                size += int(keep.sum())
            base = int(d["base"])

            def ids_of(old_ids: Sequence[int], ids: np.ndarray = ids, base: int = base) -> list[int]:
                return [int(i) for i in renumber(np.asarray(old_ids, dtype=np.int64), ids, base)]

            slots = list(d["parts"])
            new_slots = plan.remap(np.asarray(slots, dtype=np.int64))
            for slot, new in zip(slots, new_slots.tolist(), strict=True):  # loop over partitions (restore time)
                if new < 0:
                    continue
                ps: PartitionState = d["parts"][slot]
                parts[new] = PartitionState(
                    threads=[replace(t, rows=tuple(ids_of(t.rows))) for t in ps.threads],
                    held=[replace(t, rows=tuple(ids_of(t.rows))) for t in ps.held],
                    seq=ps.seq,
                    history=ids_of(ps.history),
                )
            p_ids, p_ts, p_part = d["pending"]
            p_new = plan.remap(p_part)
            m = p_new >= 0
            pending.append((renumber(p_ids[m], ids, base), p_ts[m], p_new[m]))
        empty = np.zeros(0, dtype=np.int64)
        return state_format.pack(
            {
                "keys": merged_keyed(plans, max_par),
                "parts": parts,
                "batches": batches,
                "base": 0,
                "size": size,
                "pending": tuple(np.concatenate([p[i] for p in pending]) if pending else empty for i in range(3)),
                "watermark": min((int(d["watermark"]) for d in snaps), default=self.watermark),
                "n_cols": n_cols,
            }
        )


# ---------------------------------------------------------------------- spec
_AFTER_TEXT = {
    "PAST_LAST_ROW": "SKIP PAST LAST ROW",
    "TO_NEXT_ROW": "SKIP TO NEXT ROW",
    "TO_FIRST": "SKIP TO FIRST {}",
    "TO_LAST": "SKIP TO LAST {}",
}


def match_explain_parts(p: MatchParams, in_names: Sequence[str], out_names: Sequence[str]) -> list[str]:
    """The `key=[value]` parts of Flink's Match line (also the planner's LogicalMatch line,
    with `$i` input names)."""
    ext = list(in_names) + [s.display(in_names) for s in p.slots]
    n_part = len(p.partition_keys)
    measures = [f"{format_expr(e, ext)} AS {name}" for e, name in zip(p.measures, out_names[n_part:], strict=True)]
    order = [f"{in_names[k.index]} {'DESC' if k.desc else 'ASC'}" for k in p.order_keys]
    pattern = " ".join(e.text() for e in p.pattern)
    after = _AFTER_TEXT[p.after.kind].format(p.after.var)
    parts = [
        f"partitionBy=[{', '.join(in_names[i] for i in p.partition_keys)}]",
        f"orderBy=[{', '.join(order)}]",
        f"measures=[{', '.join(measures)}]",
        "rowsPerMatch=[ONE ROW PER MATCH]",
        f"after=[{after}]",
        f"pattern=[{pattern}]",
    ]
    if p.within_ms is not None:
        parts.append(f"within=[{p.within_ms} ms]")
    define = [f"{v}={format_expr(e, ext)}" for v, e in p.define]
    parts.append(f"define=[{', '.join(define)}]")
    return parts


class MatchSpec(OperatorSpec[MatchParams]):
    """MATCH_RECOGNIZE over an insert-only input, keyed on PARTITION BY; insert-only output."""

    name = "Match"
    params_type = MatchParams
    operator_class = MatchOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(False, False, "Spark has no MATCH_RECOGNIZE.")

    def input_keys(self, params: MatchParams, input_index: int) -> tuple[int, ...]:
        return params.partition_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if inputs and inputs[0].changelog_mode != "I":
            below = inputs[0].inputs
            producer = below[0].operator if below else "input"
            raise PlanRefusedError(
                f"Match Recognize doesn't support consuming update changes which is produced by node {producer}"
            )
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        in_names = [f.name for f in node.inputs[0].fields]
        return match_explain_parts(self.params(node), in_names, [f.name for f in node.fields])


MATCH = register_spec(MatchSpec())
