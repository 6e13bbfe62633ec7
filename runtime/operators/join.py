"""Join: Flink's regular (non-windowed) streaming join and its semi/anti variant.

Params: `JoinParams` below (planner.rules.joins builds them).

Output: regular joins emit left columns then right columns; SEMI/ANTI emit the left row.

STREAMING follows Flink's StreamingJoinOperator / StreamingSemiAntiJoinOperator: each
input row joins with the other side's stored rows (equal key slot, residual TRUE); results
are +I for accumulating input rows and -D for retracting ones. An outer side's row with no
match is emitted null-padded; when the other side's first match arrives the padded row is
retracted (-D) before the joined row, and when its last match goes it is emitted again.
Semi/anti joins emit the left row itself (with its row kind) when it (does not) match, and
+I/-D of left rows whose match state flips on right input. Everything is vectorized per
batch: key slots from the shared KeyedStateBackend, candidate pairs by searchsorted over
the other side's rows sorted by key slot, the residual evaluated once over all pairs, the
association transitions by a per-slot running sum (`join_state.transitions`).

State TTL (`table.exec.state.ttl`, or per side `/*+ STATE_TTL('l' = '1h', 'r' = '1d') */`:
param `state_ttl_ms` = [left, right]): a stored row not written for its side's TTL is
dropped silently before the next batch is processed (join_state.JoinSide.expire); a key
slot with no row left on either side is freed with it.

BATCH: final rows only. The right input is the build side: buffered until it ends, then
indexed once; left rows that arrived before are probed then, and every later left batch is
probed as it arrives and its rows emitted at once, so the left input is never held whole
(Flink's batch hash join streams its probe side the same way). Right rows no left row
matched (RIGHT / FULL) are emitted when both inputs ended. With checkpointing both inputs
are buffered and joined at the end (the buffers are the snapshot).

BATCH memory (without checkpointing): the input rows held while the right input is open
(right rows counted with what their build will hold, `join_spill.build_bytes`) are bounded
by `taskmanager.memory.managed.size`. Past it, left rows buffered are written
to disk as they are (read back and probed when the right input ends); once the right rows
alone pass it, the join becomes a grace hash join (runtime/operators/join_spill.py): both
inputs in hash partitions of the join key on disk, joined a partition at a time at the
end by the same build and probe (the `PartitionJoin` methods below), so memory is about
the bound whatever the inputs' sizes. Probing looks keys up without adding them, so the
key index holds the right side's keys only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import (
    OldStates,
    SlotPlan,
    in_key_group_range,
    key_groups_of,
    load_state,
    max_parallelism_of,
    merge_ttl,
    merged_keyed,
    plan_slots,
)
from runtime.checkpoint.restore import RestoreError
from runtime.errors import JobError
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import conform, emits_update_before, eval_context, make_batch
from runtime.operators._join_util import join_type_name
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.join_spill import GraceHashJoin, batches, build_bytes
from runtime.operators.join_state import JoinSide, candidate_pairs, transitions
from runtime.operators.spec import (
    KEYED,
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.plan_text import format_expr
from runtime.spill import MANAGED_MEMORY_SIZE, SpillFiles, spill_refusal, tmp_dir
from runtime.state import create_backend
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.ttl import now_ms, operator_ttl
from runtime.types import DataType

# A join without equi-join keys builds at most this many candidate pairs at a time.
_NESTED_LOOP_PAIRS = 1 << 20
_OUTER = {"INNER": (False, False), "LEFT": (True, False), "RIGHT": (False, True), "FULL": (True, True)}


class SingleRowError(JobError):
    """A scalar subquery produced more than one row."""


@frozen_dataclass
class JoinParams(OperatorParams):
    """A regular join. `join_type` INNER | LEFT | RIGHT | FULL | SEMI | ANTI; `left_keys` /
    `right_keys` the equi-key columns of each input (empty: every row has the same key);
    `key_types` the common type each key pair is compared in; `null_safe` per key (IS NOT
    DISTINCT FROM: NULL matches NULL); `condition` the residual predicate over the left
    columns then the right columns; `left_width`; `right_types` the right input's column
    types; `single_row_right` a scalar subquery (fail when the right side holds more than
    one row, like Flink's SINGLE_VALUE); `state_ttl_ms` the STATE_TTL hint per side (ms,
    None = not hinted; runtime/state/ttl.py)."""

    join_type: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    key_types: tuple[DataType, ...]
    null_safe: tuple[bool, ...]
    condition: Expr | None
    left_width: int
    right_types: tuple[DataType, ...]
    single_row_right: bool = False
    state_ttl_ms: tuple[int | None, int | None] | None = None

    @property
    def semi(self) -> bool:
        """SEMI / ANTI: the output is the left row."""
        return self.join_type in ("SEMI", "ANTI")


class JoinOperator(Operator):
    """Regular join of two inputs with keyed multiset state per side (module docstring)."""

    checkpointing = "custom"  # key index + both sides' multisets (snapshot_state below)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = JoinParams.of(node)
        self.join_type: str = p.join_type.upper()
        self.semi = p.semi
        self.keys: tuple[list[int], list[int]] = (list(p.left_keys), list(p.right_keys))
        self.key_types = [t.to_arrow() for t in p.key_types]
        self.null_safe = list(p.null_safe) or [False] * len(self.keys[0])
        self.condition = p.condition
        self.left_width = p.left_width
        self.single_row_right = p.single_row_right
        left_types = [f.type.to_arrow() for f in node.schema[: self.left_width]]
        right_types = [t.to_arrow() for t in p.right_types]
        if not right_types and not self.semi:
            right_types = [f.type.to_arrow() for f in node.schema[self.left_width :]]
        self.types = (left_types, right_types)
        self.key_state = ctx.state if ctx.state is not None else create_backend(ctx.config)
        ttl = [0, 0] if ctx.is_batch else [operator_ttl(ctx.config, p, side) for side in (0, 1)]
        self.sides = (
            JoinSide(create_backend(ctx.config), left_types, ttl[0]),
            JoinSide(create_backend(ctx.config), right_types or None, ttl[1]),
        )
        self._ttl = any(ttl)
        self._now = 0
        self.outer = _OUTER.get(self.join_type, (False, False))
        self._buffers: tuple[list[pa.RecordBatch], list[pa.RecordBatch]] = ([], [])
        self._ended: set[int] = set()
        # BATCH: the right side is built (its input ended); right slots a left row matched
        # (RIGHT / FULL); a left batch of no rows, for the NULL-padded unmatched right rows
        self._built = False
        self._matched = np.zeros(0, dtype=bool)
        self._left_empty: pa.RecordBatch | None = None
        # BATCH memory (module docstring): the bound (0: never spill; with checkpointing
        # the buffers are the snapshot), the bytes buffered per input, the spill files, the
        # partition of left rows written while the right input was open, the grace hash
        # join once the right rows passed the bound, and the right rows it was given.
        self.spill_bound = MANAGED_MEMORY_SIZE.get(ctx.config) if ctx.is_batch and not ctx.checkpointing else 0
        self._buffered = [0, 0]
        self._spill: SpillFiles | None = None
        self._waiting: int | None = None
        self._grace: GraceHashJoin | None = None
        # What the join outputs besides joined pairs (join_spill.PartitionJoin).
        self.keeps_unmatched_left = self.outer[0] or self.join_type == "ANTI"
        self.keeps_unmatched_right = self.outer[1] and not self.semi
        self.keeps_matched_left = self.join_type == "SEMI"
        # Set by the executor before `open`: an insert-only side skips row hashing.

    def open(self) -> None:
        modes = self.input_changelog_modes or []
        for side, mode in zip(self.sides, modes, strict=False):
            side.append_only = mode == "I"

    # ------------------------------------------------------------------ helpers
    def key_arrays(self, data: pa.RecordBatch, side: int) -> tuple[list[pa.Array], np.ndarray]:
        """The rows' join-key columns in the types both inputs compare them in, and where
        a (not null-safe) key column is NULL: a key that never matches."""
        cols: list[pa.Array] = []
        null = np.zeros(data.num_rows, dtype=bool)
        for j, idx in enumerate(self.keys[side]):
            col = data.column(idx)
            if j < len(self.key_types):
                col = conform(col, self.key_types[j])
            if not self.null_safe[j] and col.null_count:
                null |= col.is_null().to_numpy(zero_copy_only=False)
            cols.append(col)
        return cols, null

    def _key_slots(self, data: pa.RecordBatch, side: int, create: bool = True) -> np.ndarray:
        """Join-key slot of every row; -1 where a (not null-safe) key column is NULL (and,
        without `create`, where the key has no slot yet)."""
        cols, null = self.key_arrays(data, side)
        slots = self.key_state.lookup(cols, data.num_rows, create=create)
        slots[null] = -1
        return slots

    def _match(
        self, data: pa.RecordBatch, side: int, key_slots: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pairs (probe row, other slot) that join, and each probe row's match weight
        (number of other-side copies it joins with)."""
        other = self.sides[1 - side]
        n = data.num_rows
        if self.condition is not None and not self.keys[side] and n > 1:
            # No equi-join key (a nested-loop join): every probe row pairs with every
            # stored row, so the pairs and the residual's columns are built for chunks of
            # probe rows, at most _NESTED_LOOP_PAIRS pairs at a time (memory bounded by
            # that, not by batch rows x stored rows).
            step = max(1, _NESTED_LOOP_PAIRS // max(1, len(other.live())))
            parts = []
            for lo in range(0, n, step):
                chunk = data.slice(lo, step)
                p, sl = candidate_pairs(key_slots[lo : lo + step], other)
                if len(p):
                    keep = self._residual(chunk, side, p, sl)
                    parts.append((p[keep] + lo, sl[keep]))
            probe = np.concatenate([p for p, _ in parts]) if parts else np.zeros(0, dtype=np.int64)
            slots = np.concatenate([sl for _, sl in parts]) if parts else np.zeros(0, dtype=np.int64)
        else:
            probe, slots = candidate_pairs(key_slots, other)
            if self.condition is not None and len(probe):
                keep = self._residual(data, side, probe, slots)
                probe, slots = probe[keep], slots[keep]
        weights = other.count[slots] if len(slots) else np.zeros(0, dtype=np.int64)
        matches = np.bincount(probe, weights=weights, minlength=data.num_rows).astype(np.int64)
        return probe, slots, matches

    def _residual(self, data: pa.RecordBatch, side: int, probe: np.ndarray, slots: np.ndarray) -> np.ndarray:
        idx = pa.array(probe, type=pa.int64())
        probe_cols = [c.take(idx) for c in data.columns]
        other_cols = self.sides[1 - side].take(slots)
        cols = probe_cols + other_cols if side == 0 else other_cols + probe_cols
        batch = pa.RecordBatch.from_arrays(cols, names=[f"f{i}" for i in range(len(cols))])
        assert self.condition is not None
        cond = evaluate(self.condition, batch, eval_context(self.ctx, batch.num_rows))
        return np.asarray(pc.fill_null(cond, False).to_numpy(zero_copy_only=False), dtype=bool)

    def _emit(
        self,
        out: Output,
        side: int,
        data: pa.RecordBatch,
        probe_idx: np.ndarray,
        other_slots: np.ndarray,
        kinds: np.ndarray,
    ) -> None:
        """Emit rows made of probe rows (index -1 = NULLs) and other-side rows (slot -1 =
        NULLs), in the given order."""
        if len(kinds) == 0:
            return
        probe_cols = [c.take(pa.array(probe_idx, mask=probe_idx < 0, type=pa.int64())) for c in data.columns]
        if self.semi:
            out.emit(make_batch(self.node, probe_cols if side == 0 else [], kinds.astype(np.int8)))
            return
        other_cols = self.sides[1 - side].take(other_slots)
        cols = probe_cols + other_cols if side == 0 else other_cols + probe_cols
        out.emit(make_batch(self.node, cols, kinds.astype(np.int8)))

    def _check_single_row(self) -> None:
        if self.single_row_right and self.sides[1].total() > 1:
            raise SingleRowError(
                "Scalar subquery returned more than one row (SingleValueAggFunction received more than one element)"
            )

    # ------------------------------------------------------------------ streaming
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        side = input_index
        data = self._conform(data, side)
        if self.ctx.is_batch:
            if side == 0 and self._left_empty is None:
                self._left_empty = data.slice(0, 0)
            if self._grace is not None:
                self._grace.add(side, data, out)
            elif side == 0 and self._built:
                self._probe(data, out)  # the right side is complete: stream the left
            else:
                self._buffers[side].append(data)
                self._buffered[side] += build_bytes(data.nbytes, data.num_rows) if side == 1 else data.nbytes
                if self.spill_bound and sum(self._buffered) > self.spill_bound:
                    self._bound_buffers(out)
            return
        kinds = row_kinds(batch)
        signs = np.where((kinds == INSERT) | (kinds == UPDATE_AFTER), 1, -1).astype(np.int64)
        if self._ttl:
            self._now = now_ms()
            self._expire(self._now)
        key_slots = self._key_slots(data, side)
        probe, slots, matches = self._match(data, side, key_slots)
        if self.semi:
            self._semi_streaming(out, side, data, kinds, signs, probe, slots, matches)
        else:
            self._join_streaming(out, side, data, signs, probe, slots, matches)
        keep_assoc = (not self.semi and self.outer[side]) or (self.semi and side == 0)
        self.sides[side].apply(data, signs, key_slots, matches if keep_assoc else None, self._now)
        if side == 1:
            self._check_single_row()

    def _conform(self, data: pa.RecordBatch, side: int) -> pa.RecordBatch:
        types = self.types[side] or self.sides[side].types
        if not types or all(c.type == t for c, t in zip(data.columns, types, strict=False)):
            return data
        cols = [conform(c, t) for c, t in zip(data.columns, types, strict=False)]
        return pa.RecordBatch.from_arrays(cols, names=data.schema.names)

    def _join_streaming(
        self,
        out: Output,
        side: int,
        data: pa.RecordBatch,
        signs: np.ndarray,
        probe: np.ndarray,
        slots: np.ndarray,
        matches: np.ndarray,
    ) -> None:
        other = self.sides[1 - side]
        weights = other.count[slots] if len(slots) else np.zeros(0, dtype=np.int64)
        deltas = signs[probe]
        rank = np.arange(len(probe), dtype=np.int64)
        p_parts = [np.repeat(probe, weights)]
        o_parts = [np.repeat(slots, weights)]
        k_parts = [np.repeat(np.where(deltas > 0, INSERT, DELETE), weights)]
        ord1 = [np.repeat(probe, weights)]
        ord2 = [np.repeat(rank, weights)]
        ord3 = [np.ones(int(weights.sum()), dtype=np.int64)]
        if len(probe):
            if self.outer[1 - side]:
                up, down = transitions(slots, deltas, other.assoc)
                for mask, kind, phase in ((up, DELETE, 0), (down, INSERT, 2)):
                    w = weights[mask]
                    p_parts.append(np.full(int(w.sum()), -1, dtype=np.int64))
                    o_parts.append(np.repeat(slots[mask], w))
                    k_parts.append(np.full(int(w.sum()), kind, dtype=np.int64))
                    ord1.append(np.repeat(probe[mask], w))
                    ord2.append(np.repeat(rank[mask], w))
                    ord3.append(np.full(int(w.sum()), phase, dtype=np.int64))
            np.add.at(other.assoc, slots, deltas)
            if self.outer[1 - side]:
                other.ttl.touch(slots, self._now)  # an association update writes the row
        if self.outer[side]:
            lonely = np.flatnonzero(matches == 0)
            p_parts.append(lonely)
            o_parts.append(np.full(len(lonely), -1, dtype=np.int64))
            k_parts.append(np.where(signs[lonely] > 0, INSERT, DELETE))
            ord1.append(lonely)
            ord2.append(np.full(len(lonely), -1, dtype=np.int64))
            ord3.append(np.ones(len(lonely), dtype=np.int64))
        o1, o2, o3 = np.concatenate(ord1), np.concatenate(ord2), np.concatenate(ord3)
        order = np.lexsort((o3, o2, o1))
        self._emit(
            out,
            side,
            data,
            np.concatenate(p_parts)[order],
            np.concatenate(o_parts)[order],
            np.concatenate(k_parts)[order],
        )

    def _semi_streaming(
        self,
        out: Output,
        side: int,
        data: pa.RecordBatch,
        kinds: np.ndarray,
        signs: np.ndarray,
        probe: np.ndarray,
        slots: np.ndarray,
        matches: np.ndarray,
    ) -> None:
        want_match = self.join_type == "SEMI"
        if side == 0:
            passing = (matches > 0) == want_match
            if not emits_update_before(self.node):  # the left row's kind passes: no -U wanted
                passing &= kinds != UPDATE_BEFORE
            rows = np.flatnonzero(passing)
            self._emit(out, 0, data, rows, rows, kinds[rows])
            return
        left = self.sides[0]
        if not len(probe):
            return
        deltas = signs[probe]
        up, down = transitions(slots, deltas, left.assoc)
        np.add.at(left.assoc, slots, deltas)
        left.ttl.touch(slots, self._now)
        flip = up | down
        if not flip.any():
            return
        w = left.count[slots[flip]]
        kind = np.where(up[flip], INSERT if want_match else DELETE, DELETE if want_match else INSERT)
        emit_slots = np.repeat(slots[flip], w)
        cols = left.take(emit_slots)
        out.emit(make_batch(self.node, cols, np.repeat(kind, w).astype(np.int8)))

    def _expire(self, now: int) -> None:
        """State TTL: drop both sides' rows not written for their TTL, then the key slots
        no live row refers to any more."""
        gone = [side.expire(now) for side in self.sides]
        n = sum(len(g) for g in gone)
        if not n:
            return
        extra = self.ctx.metrics.extra
        extra["state_ttl_expired_rows"] = extra.get("state_ttl_expired_rows", 0) + n
        keys = np.unique(np.concatenate([s.key[g] for s, g in zip(self.sides, gone, strict=True)]))
        keys = keys[keys >= 0]
        for s in self.sides:
            live = s.live()
            keys = keys[~np.isin(keys, s.key[live])]
        if len(keys):
            self.key_state.remove(keys)

    def state_size(self) -> dict[str, int]:
        """Join keys, stored rows (distinct rows of both sides) and approximate bytes."""
        rows = sum(len(s.live()) for s in self.sides)
        return {
            "keys": len(self.key_state.live_slots()),
            "rows": rows,
            "bytes": sum(s.state_bytes() for s in self.sides),
        }

    # ------------------------------------------------------------------ batch
    def end_input(self, input_index: int, out: Output) -> None:
        if not self.ctx.is_batch:
            return
        self._ended.add(input_index)
        if self._grace is not None:
            if input_index == 1:
                self._check_rows(self._grace.right_rows)
            if len(self._ended) == 2:
                # partition pairs are joined as the executor takes their batches
                out.emit_later(self._grace.results())
            return
        if input_index == 1 and not self.ctx.checkpointing:
            self._build(out)
            if self._waiting is not None:
                out.emit_later(self._probe_waiting())
        if len(self._ended) < 2:
            return
        if not self._built:  # checkpointing: both inputs were buffered
            self._build(out)
        if self.keeps_unmatched_right:
            out.emit_later(self._unmatched_right_later())

    def _bound_buffers(self, out: Output) -> None:
        """BATCH: the rows held passed the bound while the right input is open. Right rows
        past it alone: both inputs go to a grace hash join (join_spill.py), the rows held
        so far first; otherwise the left rows held are written out as they are (probed
        when the right input has ended)."""
        if self._spill is None:
            self._spill = SpillFiles(tmp_dir(self.ctx.config))
        if self._buffered[1] > self.spill_bound:
            grace = GraceHashJoin(self, self._spill, self.spill_bound, bool(self.keys[0]))
            for side in (1, 0):
                for data in self._buffers[side]:
                    grace.add(side, data, out)
                self._buffers[side].clear()
            if self._waiting is not None:
                for table in self._spill.take(self._waiting):
                    for data in batches(table):
                        grace.add(0, data, out)
                self._waiting = None
            self._buffered = [0, 0]
            self._grace = grace
        elif self._buffers[0]:
            if self._waiting is None:
                self._waiting = self._spill.new_partitions(1)[0]
            self._spill.write(self._waiting, pa.Table.from_batches([self._concat(0)]))
            self._buffered[0] = 0

    def _probe_waiting(self) -> Iterator[pa.RecordBatch]:
        """The left rows written out while the right input was open, probed a file at a
        time (the right side is built)."""
        assert self._spill is not None and self._waiting is not None
        out = Output()
        for table in self._spill.take(self._waiting):
            for data in batches(table):
                self._probe(data, out)
                yield from out.drain()[0]
        self._waiting = None

    def _unmatched_right_later(self) -> Iterator[pa.RecordBatch]:
        out = Output()
        self.unmatched_right(out)
        yield from out.drain()[0]

    def _check_rows(self, right_rows: int) -> None:
        if self.single_row_right and right_rows > 1:
            raise SingleRowError(
                "Scalar subquery returned more than one row (SingleValueAggFunction received more than one element)"
            )

    def _build(self, out: Output) -> None:
        """Index the right input (ended) and probe the left rows buffered so far."""
        right = self._concat(1)
        right_side = self.sides[1]
        if right.num_rows:
            right_side.apply(right, np.ones(right.num_rows, dtype=np.int64), self._key_slots(right, 1), None)
        self._check_single_row()
        self._built = True
        self._buffered = [0, 0]
        left = self._concat(0)
        if left.num_rows:
            self._probe(left, out)

    def _probe(self, left: pa.RecordBatch, out: Output, pairs_only: bool = False) -> np.ndarray:
        """BATCH: join left rows with the built right side and emit them (in left order,
        each row's matches together; LEFT / FULL: unmatched rows NULL-padded, unless
        `pairs_only`), noting the right slots they matched for the final unmatched right
        rows. Whether each left row matched."""
        right_side = self.sides[1]
        key_slots = self._key_slots(left, 0, create=False)
        probe, slots, matches = self._match(left, 0, key_slots)
        if self.semi:
            if not pairs_only:
                rows = np.flatnonzero((matches > 0) == (self.join_type == "SEMI"))
                self._emit(out, 0, left, rows, rows, np.zeros(len(rows), dtype=np.int64))
            return matches > 0
        if self.outer[1] and len(slots):
            if len(self._matched) < len(right_side.count):
                grown = np.zeros(len(right_side.count), dtype=bool)
                grown[: len(self._matched)] = self._matched
                self._matched = grown
            self._matched[slots] = True
        weights = right_side.count[slots] if len(slots) else np.zeros(0, dtype=np.int64)
        p_parts = [np.repeat(probe, weights)]
        o_parts = [np.repeat(slots, weights)]
        if self.outer[0] and not pairs_only:
            lonely = np.flatnonzero(matches == 0)
            p_parts.append(lonely)
            o_parts.append(np.full(len(lonely), -1, dtype=np.int64))
        p_idx, o_idx = np.concatenate(p_parts), np.concatenate(o_parts)
        order = np.argsort(p_idx, kind="stable")
        p_idx, o_idx = p_idx[order], o_idx[order]
        self._emit(out, 0, left, p_idx, o_idx, np.zeros(len(p_idx), dtype=np.int64))
        return matches > 0

    # join_spill.PartitionJoin: a partition's join of a grace hash join
    def build(self, right: list[pa.Table]) -> None:
        """A new build side holding these right rows (and a new key index: the keys of
        the partition only); none: release the last one."""
        max_par = self.key_state.max_parallelism
        self.key_state = HashMapStateBackend(max_parallelism=max_par)  # in memory: a partition is bounded
        fresh = JoinSide(HashMapStateBackend(max_parallelism=max_par), self.types[1] or None, 0)
        fresh.append_only = self.sides[1].append_only
        self.sides = (self.sides[0], fresh)
        self._matched = np.zeros(0, dtype=bool)
        for table in right:  # a batch at a time: the key index grows by steps
            for batch in batches(table):
                fresh.apply(batch, np.ones(batch.num_rows, dtype=np.int64), self._key_slots(batch, 1), None)

    def probe(self, left: pa.RecordBatch, out: Output, pairs_only: bool) -> np.ndarray:
        return self._probe(left, out, pairs_only)

    def unmatched_right(self, out: Output) -> None:
        """Emit the built right rows no left row matched, NULL-padded (RIGHT / FULL)."""
        if not self.keeps_unmatched_right:
            return
        right_side = self.sides[1]
        live = right_side.live()
        matched = self._matched[live] if len(self._matched) else np.zeros(len(live), dtype=bool)
        unmatched = live[~matched]
        w = right_side.count[unmatched]
        left = self._left_empty if self._left_empty is not None else self._concat(0)
        p_idx = np.full(int(w.sum()), -1, dtype=np.int64)
        self._emit(out, 0, left, p_idx, np.repeat(unmatched, w), np.zeros(len(p_idx), dtype=np.int64))

    def left_alone(self, left: pa.RecordBatch, matched: np.ndarray, out: Output) -> None:
        """Left rows beyond the joined pairs: the unmatched ones NULL-padded (LEFT / FULL)
        or themselves (ANTI), the matched ones themselves (SEMI)."""
        if self.keeps_matched_left:
            rows = np.flatnonzero(matched)
        elif self.keeps_unmatched_left:
            rows = np.flatnonzero(~matched)
        else:
            return
        if len(rows):
            padding = np.full(len(rows), -1, dtype=np.int64)
            self._emit(out, 0, left, rows, padding, np.zeros(len(rows), dtype=np.int64))

    def right_alone(self, right: pa.RecordBatch, out: Output) -> None:
        """Right rows that match nothing, NULL-padded (RIGHT / FULL)."""
        if not self.keeps_unmatched_right or right.num_rows == 0:
            return
        nulls = [pa.nulls(right.num_rows, type=t) for t in self.types[0]]
        out.emit(make_batch(self.node, nulls + list(right.columns), np.zeros(right.num_rows, dtype=np.int8)))

    def close(self) -> None:
        """Remove the spill directory (also when the job failed before the end)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        super().close()

    def _concat(self, side: int) -> pa.RecordBatch:
        bufs = self._buffers[side]
        types = self.types[side]
        if not bufs:
            if not types:
                return pa.RecordBatch.from_arrays([], names=[])
            return pa.RecordBatch.from_arrays(
                [pa.array([], type=t) for t in types], names=[f"f{i}" for i in range(len(types))]
            )
        width = bufs[0].num_columns
        names = bufs[0].schema.names
        cols = [pa.concat_arrays([conform(b.column(i), bufs[0].column(i).type) for b in bufs]) for i in range(width)]
        self._buffers[side].clear()
        return pa.RecordBatch.from_arrays(cols, names=names)

    # ------------------------------------------------------------------ checkpoints
    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """Regular join: the join-key index keeps the keys in range; each side keeps the live
        rows whose join key (NULL keys included, hashed as the exchange routes them) is in
        range, with their copy counts and association counts."""
        snaps = [load_state(s) for _, s in old]
        snaps = [s for s in snaps if s is not None]
        max_par = max_parallelism_of(self.key_state)
        plans = plan_slots([s["keys"] for s in snaps], new_range)
        out: dict[str, Any] = {"keys": merged_keyed(plans, max_par)}
        for side, name in ((0, "left"), (1, "right")):
            parts, offset = [], 0
            for s, p in zip(snaps, plans, strict=True):
                part = self._rescale_side(s[name], side, p, new_range, max_par, offset)
                offset += part["n"]
                parts.append(part)
            types = next((p["types"] for p in parts if p["types"] is not None), None)
            total = sum(p["n"] for p in parts)
            width = max((len(p["columns"]) for p in parts), default=0)
            columns = (
                [pa.concat_arrays([p["columns"][i] for p in parts if p["columns"]]) for i in range(width)]
                if width
                else []
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
                out[name]["ttl"] = merge_ttl([p["ttl"] for p in parts], plans_ttl, self.sides[side].ttl)
            if not append_only and len(rows) != total:
                raise RestoreError("cannot re-split the join state: a stored row has no entry in the row index")
        out["buffers"] = tuple(
            self._rescale_buffers([s["buffers"][side] for s in snaps], side, new_range, max_par) for side in (0, 1)
        )
        return state_format.pack(out)

    def _rescale_side(
        self, d: dict[str, Any], side: int, plan: SlotPlan, new_range: tuple[int, int], max_par: int, offset: int
    ) -> dict[str, Any]:
        """One old subtask's side of a regular join restricted to the new range: live rows
        whose join key's group is in it, re-numbered from `offset` (slots and value positions)."""
        count = np.asarray(d["count"], dtype=np.int64)
        live = np.flatnonzero(count > 0)
        cols: list[pa.Array] = list(d["columns"] or [])
        if len(live) and cols:
            pos = pa.array(np.asarray(d["pos"], dtype=np.int64)[live], type=pa.int64())
            keys = []
            for j, k in enumerate(self.keys[side]):
                c = cols[k].take(pos)
                keys.append(conform(c, self.key_types[j]) if j < len(self.key_types) else c)
            groups = key_groups_of(keys, len(live), max_par)
            live = live[in_key_group_range(groups, new_range)]
        key = np.asarray(d["key"], dtype=np.int64)[live]
        new_key = np.where(key >= 0, plan.remap(key), -1)
        take = pa.array(np.asarray(d["pos"], dtype=np.int64)[live], type=pa.int64())
        rows_snap = d["rows"] or {"slots": [], "keys": [], "key_groups": []}
        by_slot = {
            int(s): (k, g)
            for s, k, g in zip(rows_snap["slots"], rows_snap["keys"], rows_snap["key_groups"], strict=True)
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

    def _rescale_buffers(
        self, buffers: Sequence[list[pa.RecordBatch]], side: int, new_range: tuple[int, int], max_par: int
    ) -> list[pa.RecordBatch]:
        """Batch-mode buffered input rows whose join key is in the range."""
        out = []
        for b in (b for bufs in buffers for b in bufs):
            keys = [b.column(k) for k in self.keys[side]]
            keep = in_key_group_range(key_groups_of(keys, b.num_rows, max_par), new_range)
            if keep.any():
                out.append(b.filter(pa.array(keep)))
        return out

    def snapshot_state(self, checkpoint_id: int) -> Any:
        if self._grace is not None or self._waiting is not None:  # (only without checkpointing)
            raise spill_refusal(f"the BATCH join ({self.node.label or self.node.operator})")
        return state_format.pack(
            {
                "keys": self.key_state.snapshot(),
                "left": self.sides[0].snapshot(),
                "right": self.sides[1].snapshot(),
                "buffers": self._buffers,
            }
        )

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.key_state.restore(d["keys"])
        self.sides[0].restore(d["left"])
        self.sides[1].restore(d["right"])
        self._buffers = d["buffers"]


class JoinSpec(OperatorSpec[JoinParams]):
    """Regular (and semi / anti) joins: keyed on the equi-keys on both inputs."""

    name = "Join"
    params_type = JoinParams
    operator_class = JoinOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(
        True,
        False,
        "Batch: Spark joins (INNER / LEFT / RIGHT / FULL with the residual condition, SEMI / ANTI from IN / EXISTS, "
        "a scalar subquery fails on a second row as in Flink). Streaming: regular joins retract earlier results; "
        "Structured Streaming joins cannot.",
    )

    def input_keys(self, params: JoinParams, input_index: int) -> tuple[int, ...]:
        return params.left_keys if input_index == 0 else params.right_keys

    # It emits +I / -D for joined rows and forwards a semi join's left row kinds: -U only
    # from a semi join's left input, which it then leaves out.
    drops_update_before = True

    def input_update_before(
        self, node: PlanView, input_index: int, emit_update_before: bool, input_keys: UpsertKeys
    ) -> tuple[bool, ...]:
        """Flink does without -U from an input only when an upsert key of that input holds
        the join keys (its state keeps a row per key, replaced by each +U); otherwise a
        consumer that wants no -U gets them anyway (Flink falls back). streamsql's join
        state is a multiset per join key that needs every -U, so where Flink would take the
        input without -U, the input keeps them and the join still emits none."""
        p = self.params(node)
        keys = set(p.left_keys if input_index == 0 else p.right_keys)
        if emit_update_before or any(keys <= k for k in input_keys or ()):
            return (True,)
        return ()

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """Flink's join upsert keys, simplified: a side's keys stay unique when the other side
        has at most one row per join key and the join does not pad this side with NULLs."""
        p = self.params(node)
        if p.semi:
            return inputs[0]
        left, right = inputs
        unique_l = any(set(k) <= set(p.left_keys) for k in left or ())
        unique_r = any(set(k) <= set(p.right_keys) for k in right or ())
        out: set[frozenset[int]] = set()
        if unique_r and p.join_type in ("INNER", "LEFT"):
            out |= set(left or ())
        if unique_l and p.join_type in ("INNER", "RIGHT"):
            out |= {frozenset(p.left_width + i for i in k) for k in right or ()}
        return frozenset(out) if out else None

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        """Inner/semi joins of insert-only inputs are insert-only; anything else (outer or
        anti joins, updating inputs) emits retractions (Flink: ALL_CHANGES)."""
        if self.params(node).join_type in ("INNER", "SEMI") and all(i.changelog_mode == "I" for i in inputs):
            return "I"
        return "I,UB,UA,D"

    def explain(self, node: PlanView) -> list[str]:
        """Flink's `Join(joinType=[InnerJoin], where=[...], select=[...], leftInputSpec=[...],
        rightInputSpec=[...])`; the planner leaves the original condition, the row's names
        and the input specs (unique keys) in `info`."""
        p, info = self.params(node), node.info
        cond = info.get("condition")
        parts = [f"joinType=[{join_type_name(p.join_type)}]"]
        parts.append(f"where=[{format_expr(cond, info['names']) if cond is not None else 'true'}]")
        select = info["names"] if not p.semi else info["names"][: p.left_width]
        parts.append(f"select=[{', '.join(select)}]")
        parts.append(f"leftInputSpec=[{info['left_spec']}]")
        parts.append(f"rightInputSpec=[{info['right_spec']}]")
        if p.single_row_right:
            parts.append("singleRowRight=[true]")
        texts = info.get("state_ttl_text")  # the STATE_TTL hint's values as written, per side
        if texts is not None:
            sides = ", ".join(f"{side}={t}" for side, t in zip(("LEFT", "RIGHT"), texts, strict=True) if t is not None)
            parts.append(f"stateTtlHints=[[[STATE_TTL options:{{{sides}}}]]]")
        return parts


JOIN = register_spec(JoinSpec())
