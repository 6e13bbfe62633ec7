"""ChangelogNormalize: an upsert changelog (an upsert source such as `upsert-kafka`: +I/+U
carry a key's whole new row, -D may carry only the key, e.g. a Kafka tombstone) turned into
a proper retract changelog, as Flink's StreamPhysicalChangelogNormalize does.

Keyed by the table's PRIMARY KEY, the last row of every key is kept in state. Per input row,
in arrival order (Flink's "last row on changelog" deduplication):

- +I / +U of a key without a row: +I the row;
- +I / +U of a key with a row: -U the kept row, +U the new one; nothing when the new row is
  equal to the kept one (only without state TTL: with TTL Flink re-emits so that downstream
  state does not expire too early);
- -D / -U of a key with a row: -D the *kept* row (the input may carry only the key) and
  forget the key; nothing for a key without a row (deleted already, or never seen).

Vectorized: a batch is sorted by (key slot, arrival); every row's predecessor is the row
before it of the same key in the batch (present if that row was an accumulation) or, for
the key's first row in the batch, the kept row. The output is one `take` from
[batch rows ++ kept rows] interleaved as (before, after) per input row.

State: the keyed backend's slots, per-slot numpy arrays (`has_row`, `row_of`) and the kept
rows in an Arrow table (compacted now and then), as Deduplicate keeps them; re-split by key
group on restore with another parallelism. State TTL (`table.exec.state.ttl`) forgets keys
not written for the TTL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
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
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import emits_update_before, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.rank_common import grow, put_kept_rows, take_rows
from runtime.operators.spec import (
    KEYED,
    OperatorParams,
    OperatorSpec,
    PlanRefusedError,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.state import KeyedStateBackend, create_backend
from runtime.state.ttl import StateTtl, now_ms, operator_ttl, state_bytes


@frozen_dataclass
class ChangelogNormalizeParams(OperatorParams):
    """`keys`: the input columns of the PRIMARY KEY the changelog is normalized on."""

    keys: tuple[int, ...]


def _plain(a: pa.Array | pa.ChunkedArray) -> pa.Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def rows_equal(left: Sequence[pa.Array], right: Sequence[pa.Array]) -> np.ndarray:
    """Row-wise equality of two column lists of the same length (NULL equals NULL), as
    Flink's record equaliser compares a new row with the kept one."""
    n = len(left[0]) if left else 0
    eq = np.ones(n, dtype=bool)
    for a, b in zip(left, right, strict=True):
        a, b = _plain(a), _plain(b)
        both_null = np.asarray(pc.and_(a.is_null(), b.is_null()))
        try:
            same = np.asarray(pc.fill_null(pc.equal(a, b), False))
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            # nested types (ARRAY, MAP, ROW) have no equal kernel: compare the rows' values
            same = np.fromiter((x == y for x, y in zip(a.to_pylist(), b.to_pylist(), strict=True)), bool, n)
        eq &= same | both_null
    return eq


class ChangelogNormalizeOperator(Operator):
    """See the module docstring."""

    checkpointing = "custom"  # key index, per-slot arrays, the kept rows

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = ChangelogNormalizeParams.of(node)
        self.keys = list(p.keys)
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.has_row = np.zeros(0, dtype=bool)
        self.row_of = np.zeros(0, dtype=np.int64)  # slot -> row of self.store
        self.store: pa.Table | None = None
        self._ttl_ms = operator_ttl(ctx.config, None)
        self.ttl = StateTtl(self._ttl_ms)

    def state_size(self) -> dict[str, int]:
        """Keys with a kept row and approximate bytes (metrics)."""
        return {"keys": int(self.has_row.sum()), "bytes": state_bytes(self.has_row, self.row_of, self.store)}

    def _grow_state(self) -> None:
        cap = self.state.capacity
        self.has_row = grow(self.has_row, cap, False)
        self.row_of = grow(self.row_of, cap, -1)

    def _expire(self, now: int) -> None:
        """State TTL: forget keys whose row was not written for the TTL."""
        slots = self.ttl.expired(now)
        if len(slots):
            slots = slots[self.state.contains(slots) & self.has_row[slots]]
        if not len(slots):
            return
        self.has_row[slots] = False
        self.row_of[slots] = -1
        self.state.remove(slots)
        extra = self.ctx.metrics.extra
        extra["state_ttl_expired_keys"] = extra.get("state_ttl_expired_keys", 0) + len(slots)

    def _put(self, slots: np.ndarray, rows: pa.Table) -> None:
        """Keep `rows` as the rows of `slots` (compacting the store now and then)."""
        self.store = put_kept_rows(self.store, self.row_of, self.has_row, slots, rows)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        kinds = row_kinds(batch)
        acc = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        now = now_ms() if self.ttl.enabled else 0
        if self.ttl.enabled:
            self._expire(now)
        slots = self.state.lookup([data.column(i) for i in self.keys], n)
        self._grow_state()
        # rows by (slot, arrival): a row's predecessor is the one before it of the same key
        order = np.lexsort((np.arange(n), slots))
        ss = slots[order]
        first = np.r_[True, ss[1:] != ss[:-1]]
        last = np.r_[ss[1:] != ss[:-1], True]
        prev_row = np.r_[-1, order[:-1]]  # batch row before, in sorted order
        kept = first & self.has_row[ss]  # first of its key in the batch, with a kept row
        prev_exists = np.where(first, kept, acc[prev_row])
        # predecessors as indexes into [batch rows ++ the kept rows they need]
        prev_idx_sorted = np.where(first, -1, prev_row)
        prev_idx_sorted[kept] = n + np.arange(int(kept.sum()))
        prev_exists_a = np.empty(n, dtype=bool)
        prev_idx = np.empty(n, dtype=np.int64)
        prev_exists_a[order] = prev_exists
        prev_idx[order] = prev_idx_sorted
        table = pa.Table.from_batches([data])
        if kept.any():
            assert self.store is not None
            old = pa.Table.from_arrays(take_rows(self.store, self.row_of[ss[kept]]), schema=table.schema)
            table = pa.concat_tables([table, old])
        both = np.flatnonzero(acc & prev_exists_a)
        equal = np.zeros(n, dtype=bool)
        if len(both) and not self.ttl.enabled:
            idx_new = pa.array(both, pa.int64())
            idx_old = pa.array(prev_idx[both], pa.int64())
            equal[both] = rows_equal(
                [c.take(idx_old) for c in table.columns], [_plain(c).take(idx_new) for c in data.columns]
            )
        before = prev_exists_a & ~(acc & equal)  # -U (update) or -D (delete) of the predecessor
        if not emits_update_before(self.node):
            before &= ~acc  # no consumer wants -U: only the -D
        after = acc & ~equal  # +I (new key) or +U
        rows = np.flatnonzero(before)
        news = np.flatnonzero(after)
        if len(rows) or len(news):
            take = np.concatenate([prev_idx[rows], news])
            pos = np.concatenate([2 * rows, 2 * news + 1])
            out_kinds = np.concatenate(
                [
                    np.where(acc[rows], UPDATE_BEFORE, DELETE),
                    np.where(prev_exists_a[news], UPDATE_AFTER, INSERT),
                ]
            ).astype(np.int8)
            o = np.argsort(pos, kind="stable")
            cols = take_rows(table, take[o])
            out.emit(make_batch(self.node, cols, out_kinds[o]))
        # the state after the batch: each key's last row (kept if an accumulation)
        final_rows = order[last]
        final_slots = ss[last]
        keep = acc[final_rows]
        gone = final_slots[~keep & self.has_row[final_slots]]
        if len(gone):
            self.has_row[gone] = False
            self.row_of[gone] = -1
            self.state.remove(gone)
        put_slots = final_slots[keep]
        if len(put_slots):
            self.has_row[put_slots] = True
            self.ttl.touch(put_slots, now)
            new_rows = pa.Table.from_arrays(take_rows(data, final_rows[keep]), schema=table.schema)
            self._put(put_slots, new_rows)

    # ------------------------------------------------------------------ checkpoints
    def snapshot_state(self, checkpoint_id: int) -> Any:
        return state_format.pack(
            {"keys": self.state.snapshot(), "arrays": (self.has_row, self.row_of), "store": self.store, "ttl": self.ttl}
        )

    def restore_state(self, handles: Any) -> None:
        d = state_format.unpack(handles)
        self.state.restore(d["keys"])
        self.has_row, self.row_of = d["arrays"]
        self.store = d["store"]
        self.ttl = d.get("ttl") or StateTtl(self._ttl_ms)
        self.ttl.reconfigure(self._ttl_ms)

    def rescale_snapshots(self, old: OldStates, new_range: tuple[int, int], index: int, parallelism: int) -> Any:
        """The keys of `new_range` with their kept rows (the row store rebuilt with only those)."""
        snaps = [s for s in (load_state(s) for _, s in old) if s is not None]
        plans = plan_slots([s["keys"] for s in snaps], new_range)
        has_parts: list[np.ndarray] = []
        row_parts: list[np.ndarray] = []
        stores: list[pa.Table] = []
        stored = 0
        for s, p in zip(snaps, plans, strict=True):
            has = take_slot_array(s["arrays"][0], p.old_slots, "changelog-normalize state")
            row_of = take_slot_array(s["arrays"][1], p.old_slots, "changelog-normalize state")
            live = has & (row_of >= 0)
            if live.any() and s["store"] is not None:
                stores.append(s["store"].take(pa.array(row_of[live], type=pa.int64())))
            new_row_of = np.full(len(row_of), -1, dtype=np.int64)
            new_row_of[live] = stored + np.arange(int(live.sum()), dtype=np.int64)
            stored += int(live.sum())
            has_parts.append(live)
            row_parts.append(new_row_of)
        merged = (concat_slot_arrays(has_parts, self.has_row), concat_slot_arrays(row_parts, self.row_of))
        store = pa.concat_tables(stores).combine_chunks() if stores else None
        result = {"keys": merged_keyed(plans, max_parallelism_of(self.state)), "arrays": merged, "store": store}
        if any(s.get("ttl") is not None for s in snaps):
            result["ttl"] = merge_ttl([s.get("ttl") for s in snaps], plans, self.ttl)
        return state_format.pack(result)


class ChangelogNormalizeSpec(OperatorSpec[ChangelogNormalizeParams]):
    """Normalizes an upsert changelog by its key (see the module docstring); the planner
    puts one after every STREAMING scan whose connector emits an upsert changelog."""

    name = "ChangelogNormalize"
    params_type = ChangelogNormalizeParams
    operator_class = ChangelogNormalizeOperator
    input_distribution = KEYED
    rescalable = True
    state_ttl = True
    spark = SparkCapability(
        False,
        False,
        "Planned after an upsert source (upsert-kafka) or, with `table.exec.source.cdc-events-duplicate`, a CDC "
        "source with a PRIMARY KEY; never in BATCH mode (such sources are refused there).",
    )

    def input_keys(self, params: ChangelogNormalizeParams, input_index: int) -> tuple[int, ...]:
        return params.keys

    drops_update_before = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        if not self.params(node).keys:
            raise PlanRefusedError(f"{self.name} needs the PRIMARY KEY of its upsert source")
        return "I,UB,UA,D"

    def input_update_before(
        self, node: PlanView, input_index: int, emit_update_before: bool, input_keys: UpsertKeys
    ) -> tuple[bool, ...]:
        """Never -U (Flink: ONLY_UPDATE_AFTER): an upsert source has none; a CDC source (with
        `table.exec.source.cdc-events-duplicate`) has them left out by a DropUpdateBefore."""
        return (False,)

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """The PRIMARY KEY it normalizes on."""
        return frozenset({frozenset(self.params(node).keys)})

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = [f.name for f in node.inputs[0].fields] if node.inputs else [f.name for f in node.fields]
        return [f"key=[{', '.join(names[k] for k in p.keys)}]"]


CHANGELOG_NORMALIZE = register_spec(ChangelogNormalizeSpec())
