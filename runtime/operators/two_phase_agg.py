"""Local and global phases of a two-phase GroupAggregate (planner/optimizer/two_phase_agg.py
documents the partial layout in `params.partials` / `params.count1`).

LocalGroupAggregate: per input batch, one +I row per key with signed partials (counts and
sums of +I/+U rows minus those of -U/-D rows; MIN/MAX only over insert-only input),
computed with one Arrow hash aggregation. It keeps no state.

GlobalGroupAggregate: the GroupAggregate operator over the partial rows, whose aggregate
set merges partials: SUM0 of counts, SUM of sums (NULL while no non-null value is left),
MIN of mins, MAX of maxes, AVG as the summed sum over the summed count (as the one-phase AVG
divides), and the key's liveness from the summed `count1$`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.aggregates.accumulators import average
from runtime.aggregates.aggset import AggregateSet
from runtime.batch import data_columns, row_kinds
from runtime.checkpoint.format import register_state_type
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.group_agg import (
    GroupAggregateOperator,
    GroupAggregateParams,
    GroupAggregateSpec,
    partial_final_type,
    signs_of,
)
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_params import AggCallParams
from runtime.plan_text import agg_display_name, format_agg
from runtime.types import BIGINT, DOUBLE, Field


@frozen_dataclass
class LocalGroupAggregateParams(OperatorParams):
    """The local phase: group by `grouping`, partial accumulators of `aggs` (the original
    calls) in the output columns `partials[i]` for call i, the signed row count in column
    `count1`."""

    grouping: tuple[int, ...]
    aggs: tuple[AggCallParams, ...]
    partials: tuple[tuple[int, ...], ...]
    count1: int


@frozen_dataclass
class GlobalGroupAggregateParams(GroupAggregateParams):
    """The global phase: a GroupAggregate (`grouping` = the local phase's key columns)
    merging the partial columns `partials[i]` of call i and the row counts in `count1`."""

    partials: tuple[tuple[int, ...], ...] = ()
    count1: int = 0


class LocalGroupAggregateOperator(Operator):
    """Pre-aggregates each batch per key into partial accumulators (stateless)."""

    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = LocalGroupAggregateParams.of(node)
        self.grouping: list[int] = list(params.grouping)
        self.calls: list[AggCallParams] = list(params.aggs)

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        signs = signs_of(row_kinds(batch))
        cols: dict[str, pa.Array] = {f"k{j}": data.column(g) for j, g in enumerate(self.grouping)}
        aggs: list[tuple[str, str]] = []
        for i, c in enumerate(self.calls):
            args = [data.column(a) for a in c.args]
            valid = np.ones(n, dtype=bool)
            if c.filter is not None:
                valid &= pc.fill_null(data.column(c.filter), False).to_numpy(zero_copy_only=False).astype(bool)
            name = c.name.lower()
            if name in ("count", "sum", "sum0", "avg"):
                nonnull = valid.copy()
                for a in args:
                    if a.null_count:
                        nonnull &= a.is_valid().to_numpy(zero_copy_only=False)
                cols[f"c{i}"] = pa.array(np.where(nonnull, signs, 0))
                if name in ("sum", "sum0", "avg"):
                    x = args[0]
                    if name == "avg":  # AVG accumulates in BIGINT / DOUBLE
                        x = x.cast(pa.float64() if pa.types.is_floating(x.type) else pa.int64())
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
            name = c.name.lower()
            if name in ("sum", "avg"):
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
        self,
        calls: Sequence[AggCallParams],
        layout: Sequence[Sequence[int]],
        count1: int,
        input_types: list[pa.DataType],
    ) -> None:
        merge_calls: list[AggCallParams] = []
        self.final: list[tuple[str, list[int]]] = []  # (kind, indices into merge_calls)
        for c, cols in zip(calls, layout, strict=True):
            name = c.name.lower()
            base = len(merge_calls)
            if name == "count":
                merge_calls.append(_call("sum0", cols[0], BIGINT(False)))
            elif name == "sum":
                merge_calls.append(_call("sum", cols[0], c.type))
                merge_calls.append(_call("sum0", cols[1], BIGINT(False)))
            elif name == "avg":  # the partial sums are BIGINT / DOUBLE (the local phase's)
                total = DOUBLE() if pa.types.is_floating(input_types[cols[0]]) else BIGINT()
                merge_calls.append(_call("sum", cols[0], total))
                merge_calls.append(_call("sum0", cols[1], BIGINT(False)))
            elif name == "sum0":
                merge_calls.append(_call("sum0", cols[0], c.type))
            else:
                merge_calls.append(_call(name, cols[0], c.type))
            self.final.append((name, list(range(base, len(merge_calls)))))
        super().__init__(merge_calls, input_types, retract=False)
        self.count1 = count1
        self.result_types = [c.type for c in calls]

    def fold(self, slots: np.ndarray, signs: np.ndarray, batch: pa.RecordBatch) -> None:
        if not len(slots):
            return
        super().fold(slots, signs, batch)
        # row_count is the number of live input rows (the partials' signed counts), not
        # the number of partial rows super() added.
        delta = batch.column(self.count1).to_numpy(zero_copy_only=False).astype(np.int64)
        np.add.at(self.row_count, slots, (delta - 1) * signs)

    def results(self, slots: np.ndarray) -> list[pa.Array]:
        merged = super().results(slots)
        out: list[pa.Array] = []
        for name, idx in self.final:
            if name == "sum":
                total, nonnull = merged[idx[0]], merged[idx[1]]
                empty = pc.equal(nonnull, 0)
                out.append(
                    pc.if_else(empty, pa.nulls(len(total), total.type), total) if pc.any(empty).as_py() else total
                )
            elif name == "avg":
                out.append(self._average(merged[idx[0]], merged[idx[1]], len(out)))
            else:
                out.append(merged[idx[0]])
        return out

    def _average(self, total: pa.Array, count: pa.Array, i: int) -> pa.Array:
        """AVG from the merged sum and count, as the one-phase AVG computes it."""
        sums = pc.fill_null(total, 0).to_numpy(zero_copy_only=False)  # NULL only where the count is 0
        counts = count.to_numpy(zero_copy_only=False).astype(np.int64)
        empty = counts <= 0
        return average(sums, counts, empty, self.result_types[i])


def _call(name: str, col: int, dtype: Any) -> AggCallParams:
    return AggCallParams(name, (col,), dtype)


class GlobalGroupAggregateOperator(GroupAggregateOperator):
    """GroupAggregate over LocalGroupAggregate's partial rows (see the module docstring)."""

    def new_aggset(self, input_types: list[pa.DataType]) -> AggregateSet:
        p = GlobalGroupAggregateParams.of(self.node)
        return MergedAggregateSet(p.aggs, p.partials, p.count1, input_types)


def _source_names(node: PlanView) -> list[str]:
    """Names of the local phase's input columns (the planner keeps them in `info`)."""
    src: tuple[Field, ...] = node.info["source_fields"]
    return [f.name for f in src]


class LocalGroupAggregateSpec(OperatorSpec[LocalGroupAggregateParams]):
    """Stateless pre-aggregation per batch: runs on every subtask before the Exchange."""

    name = "LocalGroupAggregate"
    params_type = LocalGroupAggregateParams
    operator_class = LocalGroupAggregateOperator
    parallel = True
    rescalable = True
    wants_mini_batch = True

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = _source_names(node)
        keys = [names[g] for g in p.grouping]
        aggs = [format_agg(c, names, None) for c in p.aggs]
        out = [f.name for f in node.fields]
        parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
        parts += partial_final_type(node)
        partial = [f"{a} AS ({', '.join(out[j] for j in lay)})" for a, lay in zip(aggs, p.partials, strict=True)]
        return [*parts, f"select=[{', '.join(keys + partial + ['COUNT(*) AS count1$'])}]"]


class GlobalGroupAggregateSpec(GroupAggregateSpec):
    """GroupAggregate over the local phase's partial rows (keyed by the local keys)."""

    name = "GlobalGroupAggregate"
    params_type = GlobalGroupAggregateParams
    operator_class = GlobalGroupAggregateOperator
    spark: ClassVar[SparkCapability | None] = None

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        # The local phase emits insert-only partials; the updates depend on the local
        # phase's input (below Exchange <- LocalGroupAggregate).
        local_input = inputs[0].inputs[0].inputs[0]
        return "I,UB,UA" if local_input.changelog_mode == "I" else "I,UB,UA,D"

    def explain(self, node: PlanView) -> list[str]:
        p = GlobalGroupAggregateParams.of(node)
        in_names = [f.name for f in node.inputs[0].fields]
        keys = [in_names[g] for g in p.grouping]
        merged = [
            f"{agg_display_name(c.name)}({', '.join(in_names[j] for j in lay)}) AS {f.name}"
            for c, lay, f in zip(p.aggs, p.partials, node.fields[len(keys) :], strict=True)
        ]
        parts = [f"groupBy=[{', '.join(keys)}]"] if keys else []
        split = node.info.get("split", "NONE")  # always printed by the global phase
        return [*parts, f"partialFinalType=[{split}]", f"select=[{', '.join(keys + merged)}]"]


LOCAL_GROUP_AGGREGATE = register_spec(LocalGroupAggregateSpec())
GLOBAL_GROUP_AGGREGATE = register_spec(GlobalGroupAggregateSpec())
