"""Local and global phases of a two-phase GroupAggregate (planner/optimizer/two_phase_agg.py
documents the partial layout in `params.partials` / `params.count1`).

LocalGroupAggregate: per input batch, one +I row per key with signed partials (counts and
sums of +I/+U rows minus those of -U/-D rows; MIN/MAX only over insert-only input),
computed with one Arrow hash aggregation. It keeps no state.

GlobalGroupAggregate: the GroupAggregate operator over the partial rows, whose aggregate
set merges partials: SUM0 of counts, SUM of sums (NULL while no non-null value is left),
MIN of mins, MAX of maxes, and the key's liveness from the summed `count1$`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.aggset import AggregateSet
from runtime.batch import data_columns, row_kinds
from runtime.checkpoint.format import register_state_type
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output, register_operator
from runtime.operators.group_agg import GroupAggregateOperator, signs_of
from runtime.types import BIGINT


@register_operator("LocalGroupAggregate")
class LocalGroupAggregateOperator(Operator):
    """Pre-aggregates each batch per key into partial accumulators (stateless)."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self.grouping: list[int] = list(node.params["grouping"])
        self.calls: list[dict[str, Any]] = list(node.params["aggs"])

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        signs = signs_of(row_kinds(batch))
        cols: dict[str, pa.Array] = {f"k{j}": data.column(g) for j, g in enumerate(self.grouping)}
        aggs: list[tuple[str, str]] = []
        for i, c in enumerate(self.calls):
            args = [data.column(a) for a in c.get("args") or []]
            valid = np.ones(n, dtype=bool)
            if c.get("filter") is not None:
                valid &= pc.fill_null(data.column(c["filter"]), False).to_numpy(zero_copy_only=False).astype(bool)
            name = c["name"].lower()
            if name in ("count", "sum", "sum0"):
                nonnull = valid.copy()
                for a in args:
                    if a.null_count:
                        nonnull &= a.is_valid().to_numpy(zero_copy_only=False)
                cols[f"c{i}"] = pa.array(np.where(nonnull, signs, 0))
                if name in ("sum", "sum0"):
                    x = args[0]
                    ok = pa.array(nonnull)
                    signed = pc.multiply(x, pa.array(signs).cast(x.type, safe=False))
                    cols[f"s{i}"] = pc.if_else(ok, signed, pa.nulls(n, signed.type))
                    aggs.append((f"s{i}", "sum"))
                if name != "sum0":
                    aggs.append((f"c{i}", "sum"))
            else:  # min / max over insert-only input
                cols[f"m{i}"] = pc.if_else(pa.array(valid), args[0], pa.nulls(n, args[0].type))
                aggs.append((f"m{i}", name))
        cols["r"] = pa.array(signs)
        aggs.append(("r", "sum"))
        keys = [f"k{j}" for j in range(len(self.grouping))]
        if not keys:  # a global aggregate: one constant group
            cols["g"] = pa.array(np.zeros(n, dtype=np.int8))
        table = pa.table(cols)
        grouped = table.group_by(keys or ["g"], use_threads=False).aggregate(aggs)
        res = [grouped.column(k).combine_chunks() for k in keys]
        for i, c in enumerate(self.calls):
            name = c["name"].lower()
            if name == "sum":
                res += [grouped.column(f"s{i}_sum").combine_chunks(), grouped.column(f"c{i}_sum").combine_chunks()]
            elif name == "count":
                res.append(grouped.column(f"c{i}_sum").combine_chunks())
            elif name == "sum0":
                res.append(grouped.column(f"s{i}_sum").combine_chunks())
            else:
                res.append(grouped.column(f"m{i}_{name}").combine_chunks())
        res.append(grouped.column("r_sum").combine_chunks())
        out.emit(make_batch(self.node, res, np.zeros(grouped.num_rows, dtype=np.int8)))


@register_state_type
class MergedAggregateSet(AggregateSet):
    """An AggregateSet over partial rows: merges partial accumulators per slot."""

    rescale_config = ("final",)  # not per-slot state (runtime/checkpoint/rescale.py)

    def __init__(
        self, calls: list[dict[str, Any]], layout: list[list[int]], count1: int, input_types: list[pa.DataType]
    ) -> None:
        merge_calls: list[dict[str, Any]] = []
        self.final: list[tuple[str, list[int]]] = []  # (kind, indices into merge_calls)
        for c, cols in zip(calls, layout, strict=True):
            name = c["name"].lower()
            base = len(merge_calls)
            if name == "count":
                merge_calls.append(_call("sum0", cols[0], BIGINT(False)))
            elif name == "sum":
                merge_calls.append(_call("sum", cols[0], c["type"]))
                merge_calls.append(_call("sum0", cols[1], BIGINT(False)))
            elif name == "sum0":
                merge_calls.append(_call("sum0", cols[0], c["type"]))
            else:
                merge_calls.append(_call(name, cols[0], c["type"]))
            self.final.append((name, list(range(base, len(merge_calls)))))
        super().__init__(merge_calls, input_types, retract=False)
        self.count1 = count1

    def fold(self, slots: np.ndarray, signs: np.ndarray, batch: pa.RecordBatch) -> None:
        if not len(slots):
            return
        super().fold(slots, signs, batch)
        # row_count is the number of live input rows (the partials' signed counts), not
        # the number of partial rows super() added.
        np.add.at(self.row_count, slots, -signs)
        delta = batch.column(self.count1).to_numpy(zero_copy_only=False).astype(np.int64)
        np.add.at(self.row_count, slots, delta * signs)

    def results(self, slots: np.ndarray) -> list[pa.Array]:
        merged = super().results(slots)
        out: list[pa.Array] = []
        for name, idx in self.final:
            if name == "sum":
                total, nonnull = merged[idx[0]], merged[idx[1]]
                empty = pc.equal(nonnull, 0)
                out.append(pc.if_else(empty, pa.nulls(len(total), total.type), total))
            else:
                out.append(merged[idx[0]])
        return out


def _call(name: str, col: int, dtype: Any) -> dict[str, Any]:
    return {"name": name, "args": [col], "distinct": False, "filter": None, "type": dtype, "params": {}}


@register_operator("GlobalGroupAggregate")
class GlobalGroupAggregateOperator(GroupAggregateOperator):
    """GroupAggregate over LocalGroupAggregate's partial rows (see the module docstring)."""

    def _aggset(self, batch: pa.RecordBatch) -> AggregateSet:
        if self.aggset is None:
            p = self.node.params
            self.aggset = MergedAggregateSet(
                list(p["aggs"]), list(p["partials"]), int(p["count1"]), [f.type for f in batch.schema]
            )
        return self.aggset
