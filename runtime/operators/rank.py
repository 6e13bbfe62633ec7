"""Rank (Top-N) and SortLimit (ORDER BY ... LIMIT, a Top-N over one partition).

Streaming keeps, per partition, the rows that can still reach the rank range (all rows
when the input can retract: Flink's RetractStrategy; only the rows ranked <= rankEnd for
an insert-only input: AppendFastStrategy) in one Arrow table with the partition slot, an
arrival sequence and the rank each row was last emitted with. Each input batch is applied
at once (vectorized): the touched partitions are re-ranked and the emitted rows before
and after are diffed, so the changelog has one change per row per batch (like Flink's
mini-batch); the final table equals per-record processing. Output changes:

- with the rank number in the output, or an offset (rankStart > 1), or Top-1: changes are
  paired by rank position (`-U old@r`, `+U new@r`), unpaired ones are `+I` / `-D`, as
  Flink's processElementWithRowNumber does;
- otherwise rows entering the range are `+I` and rows leaving it `-D` (insert first).

State TTL (`table.exec.state.ttl`, runtime/state/ttl.py): a partition not written
(no row added or retracted) for the TTL is forgotten silently, all its rows at once (Flink
expires per sort-key entry; a partition's entries are written together here); rows of
the partition arriving later are ranked from scratch.

A retraction removes one equal row (all columns) of the partition; a retraction of a row
that was never added is ignored. Batch mode ranks everything at `end_input` and emits the
rows in range in sorted order (which is the ORDER BY order for SortLimit).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import OldStates, load_state, max_parallelism_of, merge_ttl, merged_keyed, plan_slots
from runtime.distinct import sorted_distinct, sorted_distinct_first
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import emits_update_before, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.external_sort import ExternalSort
from runtime.operators.rank_common import SortKey, _plain, _same_adjacent, format_order, rank_numbers, take_rows
from runtime.operators.spec import (
    KEYED,
    SINGLE,
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.spill import MANAGED_MEMORY_SIZE
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.backend import encode_rows
from runtime.state.ttl import StateTtl, now_ms, operator_ttl, state_bytes

_PART, _SEQ, _RANK = "__part", "__seq", "__rank"
BIG = np.iinfo(np.int64).max


@frozen_dataclass
class RankParams(OperatorParams):
    """`rank_type` (ROW_NUMBER | RANK | DENSE_RANK) over the rows of each partition
    (`partition_keys`, input columns) sorted by `order`; the rows ranked `rank_start` ..
    `rank_end` (inclusive, None = unbounded) are kept, with the rank number appended as the
    last output column when `output_rank`."""

    partition_keys: tuple[int, ...]
    order: tuple[SortKey, ...]
    rank_type: str
    rank_start: int
    rank_end: int | None
    output_rank: bool


@frozen_dataclass
class SortLimitParams(OperatorParams):
    """ORDER BY `order` OFFSET `offset` FETCH `fetch` (None = no limit): a ROW_NUMBER Top-N
    over one partition, ranks offset+1 .. offset+fetch, without the rank number."""

    order: tuple[SortKey, ...]
    offset: int = 0
    fetch: int | None = None

    def as_rank(self) -> RankParams:
        end = None if self.fetch is None else self.offset + self.fetch
        return RankParams((), self.order, "ROW_NUMBER", self.offset + 1, end, False)


class RankOperator(Operator):
    """See the module docstring (`params`: the node's own, or a SortLimit's as a Rank)."""

    checkpointing = "custom"  # partition index + the kept rows table

    def __init__(self, node: Node, ctx: OperatorContext, params: RankParams | None = None) -> None:
        super().__init__(node, ctx)
        p = params if params is not None else RankParams.of(node)
        self.partition_keys: list[int] = list(p.partition_keys)
        self.order: list[SortKey] = list(p.order)
        self.rank_type: str = p.rank_type
        self.start = p.rank_start
        self.end = BIG if p.rank_end is None else p.rank_end
        self.output_rank = p.output_rank
        self.by_position = self.output_rank or self.start > 1 or self.end == 1
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.rows: pa.Table | None = None
        self.next_seq = 0
        # BATCH: the input, sorted by (partition, order, arrival) on disk past the bound
        self.sorter: ExternalSort | None = None
        if ctx.is_batch:
            keys = [SortKey(i) for i in self.partition_keys] + self.order
            # with checkpointing the input is held (the snapshot's "input"), never spilled
            bound = 0 if ctx.checkpointing else MANAGED_MEMORY_SIZE.get(ctx.config)
            self.sorter = ExternalSort(ctx.config, keys, bound)
        self._ttl_ms = 0 if ctx.is_batch else operator_ttl(ctx.config, None)
        self.ttl = StateTtl(self._ttl_ms)

    def _expire(self, now: int) -> None:
        """State TTL: drop the partitions not written for the TTL (nothing is emitted)."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[self.state.contains(slots)]
        if not len(slots):
            return
        if self.rows is not None:
            gone = np.isin(self.rows.column(_PART).to_numpy(), slots)
            self.rows = self.rows.filter(pa.array(~gone))
        self.state.remove(slots)
        extra = self.ctx.metrics.extra
        extra["state_ttl_expired_keys"] = extra.get("state_ttl_expired_keys", 0) + len(slots)

    def state_size(self) -> dict[str, int]:
        """Partitions, kept rows and approximate bytes (metrics)."""
        return {
            "keys": len(self.state.live_slots()),
            "rows": 0 if self.rows is None else self.rows.num_rows,
            "bytes": state_bytes(self.rows, self.ttl.last),
        }

    # ------------------------------------------------------------------ helpers
    @property
    def append_only(self) -> bool:
        modes = self.input_changelog_modes
        return modes is not None and all(m in ("I", "") for m in modes)

    def _table(self, data: pa.RecordBatch, part: np.ndarray, seq: np.ndarray, rank: np.ndarray) -> pa.Table:
        cols = list(data.columns) + [pa.array(part, pa.int64()), pa.array(seq, pa.int64()), pa.array(rank, pa.int64())]
        names = [f"c{i}" for i in range(data.num_columns)] + [_PART, _SEQ, _RANK]
        return pa.Table.from_arrays(cols, names=names)

    def _emit(self, table: pa.Table, rows: np.ndarray, ranks: np.ndarray, kinds: np.ndarray, out: Output) -> None:
        """Rows `rows` of `table` (data columns, then possibly the system ones)."""
        if len(rows) == 0:
            return
        width = len(self.node.schema) - (1 if self.output_rank else 0)
        cols = take_rows(table.select(list(range(width))), rows)
        if self.output_rank:
            cols.append(pa.array(ranks, type=pa.int64()))
        out.emit(make_batch(self.node, cols, kinds.astype(np.int8)))

    # ------------------------------------------------------------------ streaming
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        if self.sorter is not None:
            self.sorter.add(data)
            return
        kinds = row_kinds(batch)
        now = now_ms() if self.ttl.enabled else 0
        if self.ttl.enabled:
            self._expire(now)
        part = self.state.lookup([data.column(i) for i in self.partition_keys], n)
        seq = np.arange(self.next_seq, self.next_seq + n, dtype=np.int64)
        self.next_seq += n
        incoming = self._table(data, part, seq, np.zeros(n, dtype=np.int64))
        touched = sorted_distinct(part)
        self.ttl.touch(touched, now)
        if self.rows is None:
            self.rows = incoming.slice(0, 0)
        in_touched = np.isin(self.rows.column(_PART).to_numpy(), touched)
        old = self.rows.filter(pa.array(in_touched))
        rest = self.rows.filter(pa.array(~in_touched))
        adds = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        if adds.all():
            current = pa.concat_tables([old, incoming])
        else:
            current = self._apply_retractions(old, incoming, adds)
        # re-rank the touched partitions
        cur_part = current.column(_PART).to_numpy()
        cur_seq = current.column(_SEQ).to_numpy()
        width = current.num_columns - 3
        cols = [current.column(i).combine_chunks() for i in range(width)]
        idx, ranks = rank_numbers(cols, self.order, self.rank_type, cur_part, cur_seq)
        new_rank = np.zeros(len(idx), dtype=np.int64)
        in_range = (ranks >= self.start) & (ranks <= self.end)
        new_rank[idx[in_range]] = ranks[in_range]
        self._diff(old, current, new_rank, part, out)
        current = current.set_column(width + 2, _RANK, pa.array(new_rank, pa.int64()))
        if self.append_only:
            # AppendFastStrategy: rows ranked past rankEnd can never come back
            keep = np.ones(len(idx), dtype=bool)
            keep[idx[ranks > self.end]] = False
            current = current.filter(pa.array(keep))
        self.rows = pa.concat_tables([rest, current]).combine_chunks()

    def _apply_retractions(self, old: pa.Table, incoming: pa.Table, adds: np.ndarray) -> pa.Table:
        """The partitions' rows after the batch: per distinct row value, the net count of
        the batch is applied (removing the earliest equal rows, adding the latest)."""
        both = pa.concat_tables([old, incoming])
        width = both.num_columns - 3
        keys = [both.column(_PART).combine_chunks()] + [both.column(i).combine_chunks() for i in range(width)]
        group, _ = encode_rows(keys, both.num_rows)
        n_old = old.num_rows
        g_old, g_in = group[:n_old], group[n_old:]
        ng = int(group.max()) + 1 if len(group) else 0
        net = np.bincount(g_in, weights=np.where(adds, 1, -1), minlength=ng).astype(np.int64)
        remove = np.maximum(-net, 0)
        add = np.maximum(net, 0)
        # old rows: drop the first `remove[g]` of each group (by arrival)
        o = np.lexsort((old.column(_SEQ).to_numpy(), g_old)) if n_old else np.zeros(0, dtype=np.int64)
        go = g_old[o]
        first = np.searchsorted(go, go, side="left")
        within = np.arange(len(o)) - first
        keep_old = np.zeros(n_old, dtype=bool)
        keep_old[o] = within >= remove[go]
        # incoming inserts: keep the last `add[g]` of each group
        ins = np.flatnonzero(adds)
        gi = g_in[ins]
        order = np.lexsort((-ins, gi))
        gs = gi[order]
        first_i = np.searchsorted(gs, gs, side="left")
        from_end = np.arange(len(order)) - first_i
        keep_in = np.zeros(incoming.num_rows, dtype=bool)
        keep_in[ins[order]] = from_end < add[gs]
        return pa.concat_tables([old.filter(pa.array(keep_old)), incoming.filter(pa.array(keep_in))])

    def _diff(self, old: pa.Table, current: pa.Table, new_rank: np.ndarray, part: np.ndarray, out: Output) -> None:
        """Emit the changes between the rows emitted before (old.__rank) and now."""
        old_seq = old.column(_SEQ).to_numpy()
        old_rank = old.column(_RANK).to_numpy()
        cur_seq = current.column(_SEQ).to_numpy()
        now_of_old = _rank_by_seq(cur_seq, new_rank, old_seq)  # 0: gone or out of range
        was_of_cur = _rank_by_seq(old_seq, old_rank, cur_seq)  # 0: new or not emitted
        if self.output_rank:
            gone = (old_rank > 0) & (now_of_old != old_rank)
            came = (new_rank > 0) & (was_of_cur != new_rank)
        else:
            gone = (old_rank > 0) & (now_of_old == 0)
            came = (new_rank > 0) & (was_of_cur == 0)
        if not (gone.any() or came.any()):
            return
        # order partitions by first appearance in the batch
        uniq, first = sorted_distinct_first(part)
        part_order = np.empty(len(uniq), dtype=np.int64)
        part_order[np.argsort(first, kind="stable")] = np.arange(len(uniq))
        g_rows = np.flatnonzero(gone)
        c_rows = np.flatnonzero(came)
        g_part = np.searchsorted(uniq, old.column(_PART).to_numpy()[g_rows])
        c_part = np.searchsorted(uniq, current.column(_PART).to_numpy()[c_rows])
        g_rank, c_rank = old_rank[g_rows], new_rank[c_rows]
        if self.by_position:
            # pair a removal and an addition at the same (partition, rank) as -U / +U
            g_key = part_order[g_part] * (1 << 32) + g_rank
            c_key = part_order[c_part] * (1 << 32) + c_rank
            paired_g = np.isin(g_key, c_key)
            paired_c = np.isin(c_key, g_key)
            g_kind = np.where(paired_g, UPDATE_BEFORE, DELETE)
            c_kind = np.where(paired_c, UPDATE_AFTER, INSERT)
            sort_g = g_key * 2
            sort_c = c_key * 2 + 1
        else:
            g_kind = np.full(len(g_rows), DELETE)
            c_kind = np.full(len(c_rows), INSERT)
            sort_g = part_order[g_part] * (1 << 33) + (1 << 32) + g_rank
            sort_c = part_order[c_part] * (1 << 33) + c_rank
        both = pa.concat_tables([old.take(pa.array(g_rows, pa.int64())), current.take(pa.array(c_rows, pa.int64()))])
        order = np.argsort(np.concatenate([sort_g, sort_c]), kind="stable")
        ranks = np.concatenate([g_rank, c_rank])[order]
        kinds = np.concatenate([g_kind, c_kind])[order]
        if not emits_update_before(self.node):  # no consumer wants -U: the +U alone
            keep = kinds != UPDATE_BEFORE
            order, ranks, kinds = order[keep], ranks[keep], kinds[keep]
        self._emit(both, order, ranks, kinds, out)

    # ------------------------------------------------------------------ batch
    def end_input(self, input_index: int, out: Output) -> None:
        if self.sorter is None:
            return
        if self.sorter.spilled:  # ranked as the executor takes the batches
            out.emit_later(self._spilled_ranks())
            return
        data = self.sorter.take_buffer()
        if data is None:
            return
        n = data.num_rows
        cols = [data.column(i).combine_chunks() for i in range(data.num_columns)]
        part = None
        if self.partition_keys:
            part, _ = encode_rows([cols[i] for i in self.partition_keys], n)
        idx, ranks = rank_numbers(cols, self.order, self.rank_type, part, np.arange(n, dtype=np.int64))
        sel = (ranks >= self.start) & (ranks <= self.end)
        rows = idx[sel]
        self._emit(data, rows, ranks[sel], np.zeros(len(rows), dtype=np.int8), out)

    def _spilled_ranks(self) -> Iterator[pa.RecordBatch]:
        """BATCH past the bound: rank the merged sorted rows piece by piece (module docstring)."""
        assert self.sorter is not None
        width = len(self.node.schema) - (1 if self.output_rank else 0)
        last: pa.Table | None = None  # the previous piece's last row
        base = np.ones(3, dtype=np.int64)  # its (row number, rank, dense rank); a first row's
        for piece in self.sorter.merged():
            data = piece.select(list(range(self.sorter.width)))
            probe = data if last is None else pa.concat_tables([last, data])
            ranks = self._continued_ranks(probe, base)
            base = np.array([r[-1] for r in ranks], dtype=np.int64)
            last = data.slice(data.num_rows - 1)
            rank = {"ROW_NUMBER": ranks[0], "RANK": ranks[1]}.get(self.rank_type, ranks[2])
            rank = rank[probe.num_rows - data.num_rows :]
            rows = np.flatnonzero((rank >= self.start) & (rank <= self.end))
            if len(rows):
                cols = take_rows(data.select(list(range(width))), rows)
                if self.output_rank:
                    cols.append(pa.array(rank[rows], type=pa.int64()))
                yield make_batch(self.node, cols, np.zeros(len(rows), dtype=np.int8))
            if not self.partition_keys and rank[-1] > self.end:  # the rest ranks past rankEnd
                self.sorter.close()
                return

    def _continued_ranks(self, probe: pa.Table, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Row number, rank and dense rank of each row of `probe` (sorted by partition, order
        keys, arrival) within its partition, where the first row has the numbers `base` (the
        previous piece's last row, or 1, 1, 1)."""
        m = probe.num_rows
        same_part = np.ones(m, dtype=bool)
        for i in self.partition_keys:
            same_part &= _same_adjacent(_plain(probe.column(i)))
        same_key = same_part.copy()
        for k in self.order:
            same_key &= _same_adjacent(_plain(probe.column(k.index)))
        new_part, new_key = ~same_part, ~same_key
        new_part[0] = new_key[0] = True
        pos = np.arange(m, dtype=np.int64)
        part_start = np.maximum.accumulate(np.where(new_part, pos, 0))
        key_start = np.maximum.accumulate(np.where(new_key, pos, 0))
        dense = np.cumsum(new_key).astype(np.int64)
        first = part_start == 0  # the first row's partition: numbers continue from `base`
        r0, k0, d0 = (int(v) for v in base)
        row_number = np.where(first, pos + r0, pos - part_start + 1)
        rank = np.where(first, np.where(key_start == 0, k0, key_start + r0), key_start - part_start + 1)
        dense_rank = np.where(first, dense - 1 + d0, dense - dense[part_start] + 1)
        return row_number, rank, dense_rank

    def close(self) -> None:
        """Remove the BATCH sort's spill directory (also when the job failed)."""
        if self.sorter is not None:
            self.sorter.close()
        super().close()

    # ------------------------------------------------------------------ checkpoints
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Rank: partitions in range with their kept rows (the partition column re-numbered to
        the new slots); the arrival sequence continues after the largest old one."""
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
        out = {"keys": merged_keyed(plans, max_parallelism_of(self.state)), "rows": rows_out, "seq": seq}
        if any(s.get("ttl") is not None for s in snaps):
            out["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, self.ttl)
        return state_format.pack(out)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack(
            {
                "keys": self.state.snapshot(),
                "rows": self.rows,
                "seq": self.next_seq,
                "ttl": self.ttl,
                "input": self.sorter.snapshot() if self.sorter is not None else None,  # BATCH
            }
        )

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.state.restore(d["keys"])
        self.rows, self.next_seq = d["rows"], d["seq"]
        self.ttl = d.get("ttl") or StateTtl(self._ttl_ms)
        self.ttl.reconfigure(self._ttl_ms)
        if d.get("input") and self.sorter is not None:
            self.sorter.restore(d["input"])


def _rank_by_seq(src_seq: np.ndarray, src_rank: np.ndarray, query: np.ndarray) -> np.ndarray:
    """The rank of the row with each `query` sequence number in (src_seq, src_rank); 0
    when absent."""
    out = np.zeros(len(query), dtype=np.int64)
    if len(src_seq) == 0 or len(query) == 0:
        return out
    o = np.argsort(src_seq)
    s = src_seq[o]
    p = np.minimum(np.searchsorted(s, query), len(s) - 1)
    hit = s[p] == query
    out[hit] = src_rank[o[p[hit]]]
    return out


# ---------------------------------------------------------------------- specs
def _strategy(node: PlanView) -> str:
    """Flink's Top-N strategy: AppendFast for an insert-only input, Retract otherwise."""
    mode = node.inputs[0].changelog_mode if node.inputs else "I"
    return "AppendFastStrategy" if mode == "I" else "RetractStrategy"


def is_batch_node(node: PlanView) -> bool:
    """Batch ranking/sorting nodes are marked by the planner (`info["batch"]`): their
    EXPLAIN lines differ (Flink's batch operators print `global=[true]`)."""
    return bool(node.info.get("batch"))


def rank_range(start: int, end: int | None) -> str:
    return f"rankRange=[rankStart={start}, rankEnd={end if end is not None else 'unbounded'}]"


def offset_fetch(offset: int, fetch: int | None) -> list[str]:
    return [f"offset=[{offset}]", f"fetch=[{fetch if fetch is not None else 'unlimited'}]"]


def input_names(node: PlanView) -> list[str]:
    return [f.name for f in node.inputs[0].fields] if node.inputs else []


def rank_select(node: PlanView, output_rank: bool) -> str:
    """The input columns, then Flink's name of the rank number column."""
    return ", ".join(input_names(node) + (["w0$o0"] if output_rank else []))


class RankSpec(OperatorSpec[RankParams]):
    """Top-N per partition (streaming: retracting; batch: final rows at end of input)."""

    name = "Rank"
    params_type = RankParams
    operator_class = RankOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: `row_number` / `rank` / `dense_rank` over a Spark window, filtered to the range; ROW_NUMBER ties "
        "among different rows at the range boundary fail the job (Flink breaks them by arrival order, which Spark "
        "does not define). Streaming Top-N retracts earlier results: no Structured Streaming counterpart.",
    )

    drops_update_before = True

    def input_keys(self, params: RankParams, input_index: int) -> tuple[int, ...]:
        return params.partition_keys

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I,UB,UA,D"

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """Top-1: the partition keys; with the rank number in the output: the partition keys
        and that column (each rank position is one row); otherwise none known."""
        p = self.params(node)
        keys: set[frozenset[int]] = set()
        if p.rank_end == 1:
            keys.add(frozenset(p.partition_keys))
        if p.output_rank:
            keys.add(frozenset(p.partition_keys) | {len(node.fields) - 1})
        return frozenset(keys) if keys else None

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = input_names(node)
        batch = is_batch_node(node)
        parts = [] if batch else [f"strategy=[{_strategy(node)}]"]
        parts += [
            f"rankType=[{p.rank_type}]",
            rank_range(p.rank_start, p.rank_end),
            f"partitionBy=[{', '.join(names[k] for k in p.partition_keys)}]",
            f"orderBy=[{format_order(p.order, names)}]",
        ]
        if batch:
            parts.append("global=[true]")
        parts.append(f"select=[{rank_select(node, p.output_rank)}]")
        return parts


class SortLimitSpec(OperatorSpec[SortLimitParams]):
    """ORDER BY ... LIMIT: the Rank operator over one partition (all rows on one subtask)."""

    name = "SortLimit"
    params_type = SortLimitParams
    operator_class = RankOperator
    input_distribution = SINGLE
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: ROW_NUMBER over one partition (ties across the cut fail the job), then `orderBy`. "
        "Streaming Top-N over one partition needs retractions.",
    )

    drops_update_before = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I,UB,UA,D"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        parts = [f"orderBy=[{format_order(p.order, input_names(node))}]", *offset_fetch(p.offset, p.fetch)]
        parts.append("global=[true]" if is_batch_node(node) else f"strategy=[{_strategy(node)}]")
        return parts

    def create(self, node: Node, ctx: OperatorContext) -> Operator:
        return RankOperator(node, ctx, SortLimitParams.of(node).as_rank())


RANK = register_spec(RankSpec())
SORT_LIMIT = register_spec(SortLimitSpec())
