"""TemporalJoin: event-time `FROM l JOIN r FOR SYSTEM_TIME AS OF l.rowtime ON l.k = r.pk`
against a versioned table (INNER / LEFT), as Flink's TemporalRowTimeJoinOperator.

- Right (build) rows are versions: +I/+U add the version valid from their rowtime, -D
  marks the key deleted from its rowtime, -U is ignored (Flink asks the versioned input
  for an upsert changelog without UPDATE_BEFORE). A later write with the same key and
  rowtime replaces the earlier one.
- Left (probe) rows wait in state until the operator watermark reaches their rowtime.
  Then each joins the latest version with the same key and rowtime <= its own; no version,
  a deleted one, or a failed residual condition drops the row (INNER) or pads it with NULLs
  (LEFT). Output rows keep the probe row's kind and follow the probe arrival order.
- After firing, versions older than the latest one at or before the watermark are dropped.

Vectorized per watermark: a hash join of the due probe rows with the versions, a range
filter, then the last version per probe row by a lexsort.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.checkpoint import format as state_format
from runtime.checkpoint.rescale import (
    OldStates,
    exchange_keys,
    load_state,
    merged_keyed,
    operator_max_parallelism,
    owned_rows,
    plan_slots,
)
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._join_util import (
    EMPTY,
    concat,
    gather,
    instant_ms,
    join_names,
    join_type_name,
    joined_batch,
    key_pairs,
    residual_mask,
)
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
from runtime.plan_text import format_expr
from runtime.state import create_backend

_KINDS_I8 = np.zeros(0, dtype=np.int8)


@frozen_dataclass
class TemporalJoinParams(OperatorParams):
    """`kind` INNER | LEFT; the probe's keys `left_keys` match the versioned table's primary
    key `right_keys`; `left_time` the probe's rowtime column, `right_time` the versions'
    (right input column); `condition` the residual over the left then right columns;
    `left_width`; `right_monotonic`: the right input is a rowtime deduplication's input, so
    rows older than their key's latest version are dropped (as the deduplication would)."""

    kind: str
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    left_time: int
    right_time: int
    condition: Expr | None
    left_width: int
    right_monotonic: bool = False


class TemporalJoinOperator(Operator):
    checkpointing = "custom"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = TemporalJoinParams.of(node)
        self.kind = p.kind.upper()
        self.left_keys = list(p.left_keys)
        self.right_keys = list(p.right_keys)
        self.left_time = p.left_time
        self.right_time = p.right_time
        self.condition = p.condition
        nl = p.left_width
        self.ltypes = [f.type.to_arrow() for f in node.schema[:nl]]
        self.rtypes = [f.type.to_arrow() for f in node.schema[nl:]]
        # Probe rows waiting for the watermark.
        self.left: pa.Table | None = None
        self.left_ts = EMPTY
        self.left_kind = _KINDS_I8
        # Versions.
        self.right: pa.Table | None = None
        self.right_ts = EMPTY
        self.right_seq = EMPTY
        self.right_live = np.zeros(0, dtype=bool)
        self.seq = 0
        # Versioned view over a rowtime deduplication: per key, rows older than the key's
        # latest rowtime are dropped (as the deduplication drops them).
        self.monotonic = p.right_monotonic
        self.key_slots = create_backend(ctx.config) if self.monotonic else None
        self.max_ts = np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        kinds = row_kinds(batch)
        if input_index == 0:
            ts, valid = instant_ms(data.column(self.left_time))
            ts = np.where(valid, ts, np.iinfo(np.int64).min)
            self.left = concat(self.left, data)
            self.left_ts = np.concatenate([self.left_ts, ts])
            self.left_kind = np.concatenate([self.left_kind, kinds])
            return
        keep = kinds != UPDATE_BEFORE
        ts, valid = instant_ms(data.column(self.right_time))
        keep &= valid
        if not keep.all():
            data, ts, kinds = data.filter(pa.array(keep)), ts[keep], kinds[keep]
        if self.monotonic and data.num_rows:
            keep = self._in_order(data, ts)
            if not keep.all():
                data, ts, kinds = data.filter(pa.array(keep)), ts[keep], kinds[keep]
        n = data.num_rows
        if n == 0:
            return
        self.right = concat(self.right, data)
        self.right_ts = np.concatenate([self.right_ts, ts])
        self.right_seq = np.concatenate([self.right_seq, np.arange(self.seq, self.seq + n, dtype=np.int64)])
        self.seq += n
        live = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        self.right_live = np.concatenate([self.right_live, live & (kinds != DELETE)])

    def _in_order(self, data: pa.RecordBatch, ts: np.ndarray) -> np.ndarray:
        """Rows whose rowtime is >= every earlier rowtime of their key (arrival order).
        Loops over the distinct keys of the batch only."""
        assert self.key_slots is not None
        slots = self.key_slots.lookup([data.column(k) for k in self.right_keys], data.num_rows)
        cap = self.key_slots.capacity
        if len(self.max_ts) < cap:
            grown = np.full(max(cap, 2 * len(self.max_ts), 16), np.iinfo(np.int64).min, dtype=np.int64)
            grown[: len(self.max_ts)] = self.max_ts
            self.max_ts = grown
        keep = np.zeros(len(ts), dtype=bool)
        order = np.argsort(slots, kind="stable")
        s_sorted = slots[order]
        bounds = np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            rows = order[a:b]
            t = ts[rows]
            prior = np.maximum.accumulate(np.r_[self.max_ts[s_sorted[a]], t])[:-1]
            keep[rows] = t >= prior
            self.max_ts[s_sorted[a]] = max(self.max_ts[s_sorted[a]], int(t.max()))
        return keep

    # ------------------------------------------------------------------ firing
    def on_watermark(self, watermark: int, out: Output) -> None:
        self._fire(watermark, out)
        self._cleanup(watermark)
        out.emit_watermark(watermark)

    def end_input(self, input_index: int, out: Output) -> None:
        """Nothing: the final MAX_WATERMARK fired every waiting probe row."""

    def _version_of(self, probe: pa.Table, probe_ts: np.ndarray) -> np.ndarray:
        """For each probe row, the index of its version row (or -1)."""
        n = probe.num_rows
        chosen = np.full(n, -1, dtype=np.int64)
        if self.right is None or self.right.num_rows == 0:
            return chosen
        li, ri = key_pairs(
            [probe.column(k) for k in self.left_keys],
            [self.right.column(k) for k in self.right_keys],
            n,
            self.right.num_rows,
        )
        ok = self.right_ts[ri] <= probe_ts[li]
        li, ri = li[ok], ri[ok]
        if len(li) == 0:
            return chosen
        order = np.lexsort((self.right_seq[ri], self.right_ts[ri], li))
        li, ri = li[order], ri[order]
        last = np.ones(len(li), dtype=bool)
        last[:-1] = li[1:] != li[:-1]
        chosen[li[last]] = ri[last]
        return chosen

    def _fire(self, watermark: int, out: Output) -> None:
        if self.left is None or self.left.num_rows == 0:
            return
        due = self.left_ts <= watermark
        if not due.any():
            return
        probe = self.left.filter(pa.array(due))
        probe_ts, probe_kind = self.left_ts[due], self.left_kind[due]
        keep = ~due
        self.left = self.left.filter(pa.array(keep))
        self.left_ts, self.left_kind = self.left_ts[keep], self.left_kind[keep]

        chosen = self._version_of(probe, probe_ts)
        hit = chosen >= 0
        hit[hit] = self.right_live[chosen[hit]]
        if self.condition is not None and hit.any():
            idx = np.flatnonzero(hit)
            assert self.right is not None
            mask = residual_mask(self.condition, gather(probe, idx), gather(self.right, chosen[idx]), self.ctx)
            assert mask is not None
            hit[idx[~mask]] = False
        rows = np.arange(probe.num_rows, dtype=np.int64) if self.kind == "LEFT" else np.flatnonzero(hit)
        right_idx = np.where(hit[rows], chosen[rows], -1)
        batch = joined_batch(
            self.node, probe, self.right, rows, right_idx, self.ltypes, self.rtypes, kinds=probe_kind[rows]
        )
        if batch is not None:
            out.emit(batch)

    def _cleanup(self, watermark: int) -> None:
        """Keep, per key, the versions after the watermark and the latest one at or before it."""
        if self.right is None or self.right.num_rows == 0:
            return
        old = self.right_ts <= watermark
        if old.sum() < 2:
            return
        n = self.right.num_rows
        idx = np.arange(n, dtype=np.int64)
        li, ri = key_pairs(
            [self.right.column(k) for k in self.right_keys], [self.right.column(k) for k in self.right_keys], n, n
        )
        # For every old version: is there a newer old version with the same key?
        both_old = old[li] & old[ri]
        li, ri = li[both_old], ri[both_old]
        newer = (self.right_ts[ri] > self.right_ts[li]) | (
            (self.right_ts[ri] == self.right_ts[li]) & (self.right_seq[ri] > self.right_seq[li])
        )
        superseded = np.zeros(n, dtype=bool)
        superseded[li[newer]] = True
        # NULL keys never join: their versions can go once they are old.
        nulls = np.zeros(n, dtype=bool)
        for k in self.right_keys:
            col = self.right.column(k)
            if col.null_count:
                nulls |= col.is_null().to_numpy(zero_copy_only=False)
        drop = superseded | (nulls & old)
        if drop.any():
            keep = ~drop
            self.right = self.right.filter(pa.array(keep))
            self.right_ts, self.right_seq, self.right_live = (
                self.right_ts[keep],
                self.right_seq[keep],
                self.right_live[keep],
            )
        del idx

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        keys = ("left", "left_ts", "left_kind", "right", "right_ts", "right_seq", "right_live", "seq", "max_ts")
        snap = {k: getattr(self, k) for k in keys}
        snap["key_slots"] = self.key_slots.snapshot() if self.key_slots is not None else None
        return state_format.pack(snap)

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        slots = d.pop("key_slots", None)
        if slots is not None and self.key_slots is not None:
            self.key_slots.restore(slots)
        for k, v in d.items():
            setattr(self, k, v)

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The waiting probe rows whose key (the left exchange key) is in range, and the
        versions whose primary key (the right one) is; version numbers of each old
        subtask are shifted past the previous one's, keeping their order per key; the
        per-key latest rowtime of a monotonic right input follows its key's slot."""
        max_par = operator_max_parallelism(self)
        snaps = [d for d in (load_state(s) for _, s in old) if d is not None]
        left: list[pa.Table] = []
        right: list[pa.Table] = []
        arrays: dict[str, list[np.ndarray]] = {
            k: [] for k in ("left_ts", "left_kind", "right_ts", "right_seq", "right_live")
        }
        offset = 0
        for d in snaps:
            keep = owned_rows(d["left"], exchange_keys(self, 0), new_range, max_par)
            if keep.any():
                left.append(d["left"].filter(pa.array(keep)))
                arrays["left_ts"].append(d["left_ts"][keep])
                arrays["left_kind"].append(d["left_kind"][keep])
            keep = owned_rows(d["right"], exchange_keys(self, 1), new_range, max_par)
            if keep.any():
                right.append(d["right"].filter(pa.array(keep)))
                arrays["right_ts"].append(d["right_ts"][keep])
                arrays["right_seq"].append(d["right_seq"][keep] + offset)
                arrays["right_live"].append(d["right_live"][keep])
            offset += int(d["seq"])
        empty = {"left_ts": EMPTY, "left_kind": _KINDS_I8, "right_ts": EMPTY, "right_seq": EMPTY}
        snap: dict[str, Any] = {
            k: np.concatenate(v) if v else empty.get(k, np.zeros(0, dtype=bool)) for k, v in arrays.items()
        }
        snap["left"] = pa.concat_tables(left) if left else None
        snap["right"] = pa.concat_tables(right) if right else None
        snap["seq"] = offset
        snap["key_slots"], snap["max_ts"] = None, np.zeros(0, dtype=np.int64)
        if self.key_slots is not None:
            plans = plan_slots([d.get("key_slots") for d in snaps], new_range)
            parts = []
            for d, plan in zip(snaps, plans, strict=True):
                got = np.full(len(plan.old_slots), np.iinfo(np.int64).min, dtype=np.int64)
                inside = plan.old_slots < len(d["max_ts"])
                got[inside] = d["max_ts"][plan.old_slots[inside]]
                parts.append(got)
            snap["key_slots"] = merged_keyed(plans, max_par)
            snap["max_ts"] = np.concatenate(parts) if parts else snap["max_ts"]
        return state_format.pack(snap)


class TemporalJoinSpec(OperatorSpec[TemporalJoinParams]):
    """Event-time temporal join: the probe's changelog passes through (its row kinds kept)."""

    name = "TemporalJoin"
    params_type = TemporalJoinParams
    operator_class = TemporalJoinOperator
    input_distribution = KEYED
    rescalable = True
    spark = SparkCapability(False, False, "Spark has no event-time temporal join.")

    def input_keys(self, params: TemporalJoinParams, input_index: int) -> tuple[int, ...]:
        return params.left_keys if input_index == 0 else params.right_keys

    def input_update_before(
        self, node: PlanView, input_index: int, emit_update_before: bool, input_keys: UpsertKeys
    ) -> tuple[bool, ...]:
        """The probe side's row kinds pass through (it carries -U iff the consumers want
        them); the versioned side is applied by key, -U or not (preferably not)."""
        return (emit_update_before,) if input_index == 0 else (False, True)

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = join_names(node)
        nl = p.left_width
        cond = node.info.get("condition")
        eq = format_expr(cond, names) if cond is not None else "true"
        pk = ", ".join(names[nl + k] for k in p.right_keys)
        lk = ", ".join(names[k] for k in p.left_keys)
        temporal = (
            f"__TEMPORAL_JOIN_CONDITION({names[p.left_time]}, {names[nl + p.right_time]}, "
            f"__TEMPORAL_JOIN_CONDITION_PRIMARY_KEY({pk}), __TEMPORAL_JOIN_LEFT_KEY({lk}), "
            f"__TEMPORAL_JOIN_RIGHT_KEY({pk}))"
        )
        return [
            f"joinType=[{join_type_name(p.kind)}]",
            f"where=[AND({eq}, {temporal})]",
            f"select=[{', '.join(names[: len(node.fields)])}]",
        ]


TEMPORAL_JOIN = register_spec(TemporalJoinSpec())
