"""OverAggregate in recompute mode (beyond Flink, which rejects both cases, FLINK-19059):
STREAMING with an updating input (-U/-D rows) or an ORDER BY that is no time attribute
(e.g. Nexmark q6's running average over the output of a GROUP BY).

Every live input row of a partition is kept with the values last emitted for it. For
each input batch, retracted rows are removed from their partition (matched on all
columns; a loop over the retracted rows only, each compared vectorized against its
partition), new rows are added, and every partition the batch touched is recomputed
(DuckDB, over_frames.py). The output is the retract diff against what was emitted:
-D for removed rows, -U/+U for rows whose values changed, +I for new rows. The final table
therefore always equals the batch result over the live input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE
from runtime.distinct import sorted_distinct
from runtime.operators._common import emits_update_before, make_batch
from runtime.operators.over_frames import SEQ

if TYPE_CHECKING:
    from runtime.operators.over import OverAggregateOperator

SLOT = "__slot"


def _null_safe_equal(a: pa.Array, b: pa.Array) -> np.ndarray:
    eq = pc.fill_null(pc.equal(a, b), False)
    both = pc.and_(pc.is_null(a), pc.is_null(b))
    return np.asarray(pc.or_(eq, both).to_numpy(zero_copy_only=False), dtype=bool)


class UpdatingOver:
    def __init__(self, op: OverAggregateOperator) -> None:
        self.op = op
        self.live: pa.Table | None = None  # c0.., __seq, __slot
        self.values: list[pa.Array] = []  # emitted values, aligned with `live`

    def snapshot(self) -> Any:
        return {"live": self.live, "values": self.values}

    def restore(self, snap: Any) -> None:
        self.live, self.values = snap["live"], snap["values"]

    def _matches(self, live_cols: list[pa.Array], idx: np.ndarray, row: pa.RecordBatch) -> np.ndarray:
        ok = np.ones(len(idx), dtype=bool)
        take = pa.array(idx)
        for i, col in enumerate(live_cols):
            scalar_col = pa.repeat(row.column(i)[0], len(idx)) if len(idx) else row.column(i).slice(0, 0)
            ok &= _null_safe_equal(
                col.take(take), scalar_col.cast(col.type) if scalar_col.type != col.type else scalar_col
            )
        return ok

    def process(self, data: pa.RecordBatch, kinds: np.ndarray, out: Any) -> None:
        op = self.op
        width = op.width
        slots = op._slots(data)
        adds = (kinds == INSERT) | (kinds == UPDATE_AFTER)
        live = self.live
        n_live = live.num_rows if live is not None else 0
        alive = np.ones(n_live, dtype=bool)
        if (~adds).any() and live is not None:
            live_slot = live.column(SLOT).to_numpy()
            live_cols = [live.column(i).combine_chunks() for i in range(width)]
            for r in np.nonzero(~adds)[0]:  # retracted rows only
                cand = np.nonzero(alive & (live_slot == slots[r]))[0]
                if len(cand) == 0:
                    continue
                hit = cand[self._matches(live_cols, cand, data.slice(int(r), 1))]
                if len(hit):
                    alive[hit[0]] = False
        touched = sorted_distinct(slots)
        # the new live table: surviving old rows, then the added rows
        add_idx = np.nonzero(adds)[0]
        added = op._table(data.take(pa.array(add_idx)), slots[add_idx], slots[add_idx], slots[add_idx])
        added = added.select([f"c{i}" for i in range(width)] + [SEQ, SLOT])
        kept = live.filter(pa.array(alive)) if live is not None else None
        new_live = pa.concat_tables([kept, added]) if kept is not None else added
        in_touched = np.isin(new_live.column(SLOT).to_numpy(), touched)
        sub_idx = np.nonzero(in_touched)[0]
        sub = new_live.take(pa.array(sub_idx))
        fresh = op.computer.compute(sub)
        n_kept = kept.num_rows if kept is not None else 0
        old_vals = [v.filter(pa.array(alive)) for v in self.values] if self.values else []
        new_vals = []
        for ci, f in enumerate(fresh):
            base = (
                pa.concat_arrays([old_vals[ci], pa.nulls(added.num_rows, f.type)])
                if old_vals
                else pa.nulls(new_live.num_rows, f.type)
            )
            # scatter the recomputed values into their rows (one take)
            pos = np.arange(len(base), dtype=np.int64)
            pos[sub_idx] = len(base) + np.arange(len(sub_idx), dtype=np.int64)
            new_vals.append(pa.concat_arrays([base.cast(f.type), f]).take(pa.array(pos)))
        # diff
        is_old = sub_idx < n_kept
        changed = np.zeros(len(sub_idx), dtype=bool)
        if old_vals and is_old.any():
            take_old = pa.array(sub_idx[is_old])
            ch = np.zeros(int(is_old.sum()), dtype=bool)
            for ci, f in enumerate(fresh):
                ch |= ~_null_safe_equal(old_vals[ci].take(take_old), f.filter(pa.array(is_old)))
            changed[is_old] = ch
        pieces: list[tuple[pa.Table, list[pa.Array], int]] = []
        if live is not None and (~alive).any():
            dead = pa.array(~alive)
            pieces.append((live.filter(dead), [v.filter(dead) for v in self.values], DELETE))
        upd = pa.array(sub_idx[changed])
        if len(upd):
            if emits_update_before(op.node):
                pieces.append((new_live.take(upd), [v.take(upd) for v in old_vals], UPDATE_BEFORE))
            pieces.append((new_live.take(upd), [v.take(upd) for v in new_vals], UPDATE_AFTER))
        ins = pa.array(np.arange(n_kept, new_live.num_rows, dtype=np.int64))
        if len(ins):
            pieces.append((new_live.take(ins), [v.take(ins) for v in new_vals], INSERT))
        for rows, vals, kind in pieces:
            cols = [rows.column(i).combine_chunks() for i in range(width)] + list(vals)
            out.emit(make_batch(op.node, cols, np.full(rows.num_rows, kind, dtype=np.int8)))
        self.live, self.values = new_live, new_vals
