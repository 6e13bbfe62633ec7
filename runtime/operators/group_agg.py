"""GroupAggregate: non-windowed GROUP BY (and DISTINCT = a GroupAggregate with no aggs)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.aggset import AggregateSet, empty_results
from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.distinct import first_appearance, sorted_distinct_inverse
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import emits_update_before, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    KEYED,
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.plan_params import AggCallParams
from runtime.plan_text import format_agg
from runtime.spill import MANAGED_MEMORY_SIZE, HashPartitionedRows, SpillFiles, held_bytes, spill_refusal, tmp_dir
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.ttl import StateTtl, now_ms, operator_ttl, state_bytes


def signs_of(kinds: np.ndarray) -> np.ndarray:
    """+1 for +I/+U, -1 for -U/-D."""
    return np.where((kinds == INSERT) | (kinds == UPDATE_AFTER), 1, -1).astype(np.int64)


def same_values(a: pa.Array, b: pa.Array) -> np.ndarray:
    """Row-wise equality where NULL equals NULL."""
    try:
        eq = pc.fill_null(pc.equal(a, b), False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        return pc.or_(eq, both_null).to_numpy(zero_copy_only=False).astype(bool)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        return np.array([x == y for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)], dtype=bool)


# BATCH spilling (GroupAggregateOperator): partitions per split of the rows past the bound,
# and how many times a partition is split again before it is aggregated in memory anyway
# (16 ** 4 partitions: only a few keys with huge groups get there).
_SPILL_FANOUT = 16
_MAX_SPILL_LEVEL = 4
# Rows per output batch of a spilled aggregation's results, and per batch read back.
_CHUNK_ROWS = 1 << 16


@frozen_dataclass
class GroupAggregateParams(OperatorParams):
    """GROUP BY the input columns `grouping`, computing `aggs` (none: SELECT DISTINCT);
    `state_ttl_ms` is a STATE_TTL hint (None: `table.exec.state.ttl` applies)."""

    grouping: tuple[int, ...]
    aggs: tuple[AggCallParams, ...]
    state_ttl_ms: int | None = None


class GroupAggregateOperator(Operator):
    """Keyed aggregation with a retract changelog output.

    Streaming: each input batch is folded into the per-key accumulators at once
    (vectorized: slots from the state backend, scatter-adds / Arrow hash aggregates per
    accumulator); then, per key touched by the batch, the result before and after is
    compared: new key -> +I, changed -> -U old, +U new, unchanged -> nothing, count
    dropped to zero -> -D and the key is removed. The changelog therefore has one change
    per key per input batch (like Flink's mini-batch aggregation); the final table is the
    same as per-record processing. Batch mode: final rows at `end_input`; a global
    aggregate over empty input still emits one row (COUNT 0, others NULL).

    BATCH memory (hybrid hash aggregation): once the groups held (`held_bytes` of the keys
    and accumulators) pass `taskmanager.memory.managed.size`, no group is added: rows of
    held keys still fold in memory, the rows of other keys go to disk in hash partitions of
    the key (runtime/spill.py, with their row kind). At the end the held groups are
    emitted, then each partition is aggregated alone the same way (bounded too: past the
    bound it is split again with another hash). Each key's rows are folded in their input
    order by one accumulator set, so every aggregate gives the in-memory result: no
    accumulator has to merge partial states (LISTAGG's order, FIRST_VALUE, DISTINCT, Python
    UDAFs without `merge`). Only the order of the output rows differs.

    The executor sets `input_changelog_modes` before the first batch; MIN/MAX keep value
    multisets only when an input may retract.

    Checkpoints: generic (key index by key group + the accumulators + TTL timestamps).
    With checkpointing configured a BATCH aggregation never spills (its groups are the
    snapshot); a snapshot after a spill (a savepoint taken by hand) is refused
    (runtime.spill.SpilledStateError): the rows on disk are not in it.

    State TTL (streaming; `table.exec.state.ttl` or a STATE_TTL hint, runtime/state/ttl.py):
    a key not written for the TTL is dropped silently before the batch is applied; when it
    comes back it is a new key (+I, accumulators from scratch), as in Flink.
    """

    checkpointing = "generic"
    state_attributes = ("aggset", "ttl")
    state_merge = {"aggset": "slot_object", "ttl": "state_ttl"}  # restore with another parallelism

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = GroupAggregateParams.of(node)
        self.grouping: list[int] = list(params.grouping)
        self.calls: list[AggCallParams] = list(params.aggs)
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.aggset: AggregateSet | None = None
        self.emit_update_before = emits_update_before(node)
        self._ttl_ms = 0 if ctx.is_batch else operator_ttl(ctx.config, params)
        self.ttl = StateTtl(self._ttl_ms)  # last-write time per slot
        # BATCH: the bound of the groups held in memory (0: never spill; a global aggregate
        # has one group), the spill directory and the rows written past the bound.
        self.spill_bound = (
            MANAGED_MEMORY_SIZE.get(ctx.config) if ctx.is_batch and self.grouping and not ctx.checkpointing else 0
        )
        self.spill: SpillFiles | None = None
        self.overflow: HashPartitionedRows | None = None
        self.input_types: list[pa.DataType] = []

    def _aggset(self, batch: pa.RecordBatch) -> AggregateSet:
        if not self.input_types:  # (also after a restore: the accumulators came back, not the types)
            self.input_types = [f.type for f in batch.schema]
        if self.aggset is None:
            self.aggset = self.new_aggset(self.input_types)
        return self.aggset

    def new_aggset(self, input_types: list[pa.DataType]) -> AggregateSet:
        """Empty accumulators for `calls` over input columns of these types."""
        modes = self.input_changelog_modes
        retract = True if modes is None else any(m not in ("I", "") for m in modes)
        return AggregateSet(self.calls, input_types, retract)

    # ------------------------------------------------------------------ processing
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        aggset = self._aggset(data)
        signs = signs_of(row_kinds(batch))
        if self.ctx.is_batch:
            self.overflow = self._fold_bounded(self.state, aggset, data, signs, 0, self.overflow)
            return
        now = now_ms() if self.ttl.enabled else 0
        if self.ttl.enabled:
            self._expire(now)
        slots = self.state.lookup([data.column(i) for i in self.grouping], n)
        aggset.grow(self.state.capacity)
        if self.ttl.enabled and (signs < 0).any():
            data, signs, slots = self._drop_orphan_retractions(data, signs, slots)
            if data.num_rows == 0:
                return
        touched, first = first_appearance(slots)
        existed = aggset.row_count[touched] > 0
        prev = aggset.results(touched[existed])
        aggset.fold(slots, signs, data)
        alive = aggset.row_count[touched] > 0
        new = aggset.results(touched[alive])
        changed = np.ones(len(touched), dtype=bool)
        both = existed & alive
        if both.any() and self.calls:
            # positions of the `both` keys inside the prev / new subsets
            pi = np.cumsum(existed)[both] - 1
            ni = np.cumsum(alive)[both] - 1
            take_p, take_n = pa.array(pi), pa.array(ni)
            same = np.ones(int(both.sum()), dtype=bool)
            for p, q in zip(prev, new, strict=True):
                same &= same_values(p.take(take_p), q.take(take_n))
            changed[both] = ~same
        elif both.any():
            changed[both] = False
        self._emit_changes(data, touched, first, existed, alive, changed, prev, new, out)
        self.ttl.touch(touched[alive], now)
        dead = touched[~alive]
        if len(dead):
            aggset.reset(dead)
            self.state.remove(dead)
            self.ttl.forget(dead)

    def _fold_bounded(
        self,
        state: KeyedStateBackend,
        aggset: AggregateSet,
        data: pa.RecordBatch,
        signs: np.ndarray,
        level: int,
        overflow: HashPartitionedRows | None,
    ) -> HashPartitionedRows | None:
        """BATCH: fold `data` into the groups held in memory; returns where rows of keys
        not held go from now on (None while under the bound). Before the bound every key
        gets a group; after it only the held keys fold, the other rows are written out."""
        keys = [data.column(i) for i in self.grouping]
        if overflow is None:
            slots = state.lookup(keys, data.num_rows)
            aggset.grow(state.capacity)
            aggset.fold(slots, signs, data)
            if self.spill_bound and level < _MAX_SPILL_LEVEL and held_bytes(state, aggset) > self.spill_bound:
                if self.spill is None:
                    self.spill = SpillFiles(tmp_dir(self.ctx.config))
                flush = max(self.spill_bound // 4, 1 << 16)
                overflow = HashPartitionedRows(self.spill, self.grouping, level, _SPILL_FANOUT, flush)
            return overflow
        slots = state.lookup(keys, data.num_rows, create=False)
        held = slots >= 0
        if held.all():
            aggset.fold(slots, signs, data)
            return overflow
        if held.any():
            aggset.fold(slots[held], signs[held], data.filter(pa.array(held)))
        rest = ~held
        table = pa.Table.from_batches([data.filter(pa.array(rest))])
        overflow.add(table.append_column("$sign", pa.array(signs[rest].astype(np.int8))))
        return overflow

    def _spilled_results(self) -> Iterator[pa.RecordBatch]:
        """BATCH end of input after a spill: the held groups, then each spilled partition
        aggregated alone (with a fresh key index and accumulators, split again when it
        passes the bound too). The spill directory goes when the last one is done."""
        assert self.aggset is not None and self.overflow is not None and self.spill is not None
        spill = self.spill
        yield from self._group_batches(self.state, self.aggset)
        self.aggset = None  # done: the held accumulators are released
        pending = [(p, 1) for p in self.overflow.finish()]
        self.overflow = None
        while pending:
            partition, level = pending.pop()
            state = HashMapStateBackend(self.state.max_parallelism)
            aggset = self.new_aggset(self.input_types)
            overflow: HashPartitionedRows | None = None
            for table in spill.take(partition):
                for batch in table.to_batches(max_chunksize=_CHUNK_ROWS):
                    data = pa.RecordBatch.from_arrays(batch.columns[:-1], schema=_without_last(batch.schema))
                    signs = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False).astype(np.int64)
                    overflow = self._fold_bounded(state, aggset, data, signs, level, overflow)
                del table
            yield from self._group_batches(state, aggset)
            del state, aggset
            if overflow is not None:
                pending += [(p, level + 1) for p in overflow.finish()]
        spill.close()
        self.spill = None

    def _group_batches(self, state: KeyedStateBackend, aggset: AggregateSet) -> Iterator[pa.RecordBatch]:
        """The final rows of the groups in `state` (those with rows left), in chunks."""
        slots = state.live_slots()
        slots = slots[aggset.row_count[slots] > 0] if len(slots) else slots
        types = [self.node.schema[j].type.to_arrow() for j in range(len(self.grouping))]
        for lo in range(0, len(slots), _CHUNK_ROWS):
            chunk = slots[lo : lo + _CHUNK_ROWS]
            cols = state.key_arrays(chunk, types) + aggset.results(chunk)
            yield make_batch(self.node, cols, np.zeros(len(chunk), dtype=np.int8))

    def snapshot_state(self, checkpoint_id: int) -> Any:
        if self.spill is not None:
            raise spill_refusal(f"the BATCH group aggregation ({self.node.label or self.node.operator})")
        return super().snapshot_state(checkpoint_id)

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        if self.spill is not None:
            self.spill.close()
            self.spill = None
        super().close()

    def _drop_orphan_retractions(
        self, data: pa.RecordBatch, signs: np.ndarray, slots: np.ndarray
    ) -> tuple[pa.RecordBatch, np.ndarray, np.ndarray]:
        """With state TTL a retraction can arrive for a key whose state expired: Flink's
        GroupAggFunction ignores a retraction when the key has no accumulators, so an
        expired key's `-U old, +U new` becomes `+I new`. Vectorized: a retraction of a key
        without state before this batch is dropped when it precedes the key's first add
        row in the batch. Key slots created only for dropped rows are removed again."""
        assert self.aggset is not None
        n = len(slots)
        idx = np.arange(n, dtype=np.int64)
        uniq, inv = sorted_distinct_inverse(slots)
        adds = signs > 0
        first_add = np.full(len(uniq), n, dtype=np.int64)
        np.minimum.at(first_add, inv[adds], idx[adds])
        orphan = (signs < 0) & (self.aggset.row_count[slots] <= 0) & (idx < first_add[inv])
        if not orphan.any():
            return data, signs, slots
        keep = ~orphan
        unused = np.setdiff1d(slots[orphan], slots[keep])
        if len(unused):
            self.state.remove(unused)
        return data.filter(pa.array(keep)), signs[keep], slots[keep]

    def _expire(self, now: int) -> None:
        """Drop the keys whose state was not written for the TTL (nothing is emitted)."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[self.state.contains(slots)]
        if len(slots) and self.aggset is not None:
            self.aggset.reset(slots)
            self.state.remove(slots)
            extra = self.ctx.metrics.extra
            extra["state_ttl_expired_keys"] = extra.get("state_ttl_expired_keys", 0) + len(slots)

    def after_restore(self) -> None:
        self.ttl.reconfigure(self._ttl_ms)

    def state_size(self) -> dict[str, int]:
        """Keys in state and an estimate of the accumulators' bytes (job metrics, --stats)."""
        return {"keys": len(self.state.live_slots()), "bytes": state_bytes(self.aggset, self.ttl.last)}

    def _emit_changes(
        self,
        data: pa.RecordBatch,
        touched: np.ndarray,
        first: np.ndarray,
        existed: np.ndarray,
        alive: np.ndarray,
        changed: np.ndarray,
        prev: list[pa.Array],
        new: list[pa.Array],
        out: Output,
    ) -> None:
        pos = np.arange(len(touched), dtype=np.int64)
        emit_p = existed & (~alive | changed)
        emit_n = alive & (~existed | changed)
        if not self.emit_update_before:
            emit_p &= ~alive  # upsert mode: no -U
        if not (emit_p.any() or emit_n.any()):
            return
        keys_p = [data.column(i).take(pa.array(first[existed])) for i in self.grouping]
        keys_n = [data.column(i).take(pa.array(first[alive])) for i in self.grouping]
        # which rows of the prev / new subsets are emitted
        sel_p = emit_p[existed]
        sel_n = emit_n[alive]
        kind_p = np.where(alive[emit_p], UPDATE_BEFORE, DELETE)
        kind_n = np.where(existed[emit_n], UPDATE_AFTER, INSERT)
        order_key = np.concatenate([pos[emit_p] * 2, pos[emit_n] * 2 + 1])
        order = np.argsort(order_key, kind="stable")
        mp, mn = pa.array(sel_p), pa.array(sel_n)
        cols = []
        for a, b in zip(keys_p + prev, keys_n + new, strict=True):
            cols.append(pa.concat_arrays([a.filter(mp), b.filter(mn)]).take(pa.array(order)))
        kinds = np.concatenate([kind_p, kind_n])[order].astype(np.int8)
        out.emit(make_batch(self.node, cols, kinds))

    def end_input(self, input_index: int, out: Output) -> None:
        if not self.ctx.is_batch:
            return
        if self.overflow is not None:
            # the spilled groups are read back a partition at a time, as the executor takes
            # their batches (Output.emit_later), never all at once
            out.emit_later(self._spilled_results())
            return
        slots = self.state.live_slots()
        if self.aggset is not None and len(slots):
            slots = slots[self.aggset.row_count[slots] > 0]
        if len(slots) == 0:
            if not self.grouping:
                vals = empty_results(self.calls)
                out.emit(make_batch(self.node, vals, np.zeros(1, dtype=np.int8)))
            return
        types = [self.node.schema[j].type.to_arrow() for j in range(len(self.grouping))]
        cols = self.state.key_arrays(slots, types)  # Arrow columns, no tuple per key
        assert self.aggset is not None
        cols += self.aggset.results(slots)
        out.emit(make_batch(self.node, cols, np.zeros(len(slots), dtype=np.int8)))


def _without_last(schema: pa.Schema) -> pa.Schema:
    return pa.schema([schema.field(i) for i in range(len(schema) - 1)])


def explain_group_aggregate(node: PlanView, grouping: Sequence[int], aggs: Sequence[AggCallParams]) -> list[str]:
    """`groupBy=[k], select=[k, COUNT(*) AS c]` (GroupAggregate and its global phase)."""
    in_names = [f.name for f in node.inputs[0].fields]
    g = [in_names[i] for i in grouping]
    calls = [format_agg(a, in_names, f.name) for a, f in zip(aggs, node.fields[len(g) :], strict=True)]
    parts = [f"groupBy=[{', '.join(g)}]"] if g else []
    return [*parts, *partial_final_type(node), f"select=[{', '.join(g + calls)}]"]


def partial_final_type(node: PlanView) -> list[str]:
    """`partialFinalType=[PARTIAL]` / `[FINAL]` for the two aggregates split distinct makes
    (planner/optimizer/split_distinct.py marks them in `info["split"]`), as Flink prints them;
    nothing for an aggregate that is not split."""
    split = node.info.get("split")
    return [f"partialFinalType=[{split}]"] if split else []


class GroupAggregateSpec(OperatorSpec[GroupAggregateParams]):
    """Keyed by the grouping columns; a retract changelog in STREAMING, final rows in BATCH
    (where it also applies a CDC source's changelog)."""

    name = "GroupAggregate"
    params_type = GroupAggregateParams
    operator_class = GroupAggregateOperator
    input_distribution = KEYED
    rescalable = True
    state_ttl = True
    wants_mini_batch = True
    spark: ClassVar[SparkCapability | None] = SparkCapability(
        True,
        True,
        "COUNT / SUM / AVG / MIN / MAX (with DISTINCT and FILTER in batch). Streaming: update output mode turned "
        "back into a -U/+U changelog at the result; only projections may follow it (no filter, join or second "
        "aggregate over the updates).",
    )

    def input_keys(self, params: GroupAggregateParams, input_index: int) -> tuple[int, ...]:
        return params.grouping

    drops_update_before = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if inputs[0].changelog_mode == "I":
            return "I" if not self.params(node).aggs else "I,UB,UA"
        return "I,UB,UA,D"

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """The group keys (the first output columns)."""
        return frozenset({frozenset(range(len(self.params(node).grouping)))})

    def batch_changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str | None:
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        return explain_group_aggregate(node, p.grouping, p.aggs)


GROUP_AGGREGATE = register_spec(GroupAggregateSpec())
