"""LookupJoin: processing-time `FOR SYSTEM_TIME AS OF l.proc_time` join against a lookup
source (runtime.connectors.lookup), INNER / LEFT; both modes.

Per input batch: the distinct non-NULL probe keys are looked up (cache first, then one
query for all missed keys), the returned rows are hash-joined with the batch and the
residual condition is applied; LEFT pads probe rows without a partner. Output rows keep
the probe row's kind (a changelog probe stays a changelog). The loop over distinct keys
(cache bookkeeping) is the only per-key Python work; rows are joined vectorized.
Metrics: `extra["lookup_cache_hits"]`, `extra["lookup_cache_misses"]`, `extra["lookup_queries"]`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import data_columns, row_kinds
from runtime.connectors.lookup import LookupCache, LookupSource, open_lookup
from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context
from runtime.operators._join_util import (
    gather,
    join_type_name,
    joined_batch,
    key_pairs,
    residual_mask,
    unique_names,
)
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import (
    OperatorParams,
    OperatorSpec,
    PlanView,
    SparkCapability,
    UpsertKeys,
    register_spec,
)
from runtime.plan_text import format_expr
from runtime.types import Field


@frozen_dataclass
class LookupJoinParams(OperatorParams):
    """`kind` INNER | LEFT against lookup table `table` (`connector`, its `options`,
    `physical_schema`, scan `projection`): the probe's `left_keys` equal the looked-up
    rows' `right_keys` (columns after `right_projections`), which are the table columns
    `table_keys`; `right_projections` / `right_condition` apply to the table's rows before
    the join (None: as read), `condition` after it (over the left then right columns);
    `left_width` the probe's width (with computed key columns)."""

    kind: str
    table: str
    connector: str
    options: dict[str, str]
    physical_schema: tuple[Field, ...]
    projection: tuple[int, ...] | None
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    table_keys: tuple[int, ...]
    right_projections: tuple[Expr, ...] | None
    right_condition: Expr | None
    condition: Expr | None
    left_width: int


class LookupJoinOperator(Operator):
    checkpointing = "stateless"  # the lookup cache is not state (as in Flink)

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = self._params = LookupJoinParams.of(node)
        self.kind = p.kind.upper()
        self.left_keys = list(p.left_keys)
        self.right_keys = list(p.right_keys)
        self.table_keys = list(p.table_keys or self.right_keys)
        self.right_projections = list(p.right_projections) if p.right_projections is not None else None
        self.right_condition = p.right_condition
        self.condition = p.condition
        nl = p.left_width
        self.ltypes = [f.type.to_arrow() for f in node.schema[:nl]]
        self.rtypes = [f.type.to_arrow() for f in node.schema[nl:]]
        schema: tuple[Field, ...] = tuple(p.physical_schema)
        self.projection = list(p.projection) if p.projection is not None else None
        self.schema = schema
        self.options: dict[str, str] = dict(p.options)
        self.cache = LookupCache(self.options)
        self.source: LookupSource | None = None

    def open(self) -> None:
        self.source = open_lookup(self._params.connector, self.options, self.schema, dict(self.ctx.config))

    def close(self) -> None:
        if self.source is not None:
            self.source.close()

    # ------------------------------------------------------------------ lookups
    def _rows_for(self, keys: pa.Table) -> pa.Table:
        """Rows of the lookup table for the distinct keys in `keys` (cache, then source)."""

        assert self.source is not None
        key_tuples = [tuple(r.values()) for r in keys.to_pylist()]
        found: list[pa.Table] = []
        missing: list[int] = []
        for i, k in enumerate(key_tuples):
            rows = self.cache.get(k)
            if rows is None:
                missing.append(i)
            elif rows.num_rows:
                found.append(rows)
        if missing:
            ask = keys.take(pa.array(missing, type=pa.int64()))
            loaded = self.source.lookup(self.table_keys, ask)
            self.ctx.metrics.extra["lookup_queries"] = self.ctx.metrics.extra.get("lookup_queries", 0) + 1
            if loaded.num_rows:
                found.append(loaded)
            if self.cache.enabled:
                self._fill_cache(ask, loaded)
        extra = self.ctx.metrics.extra
        extra["lookup_cache_hits"] = self.cache.hits
        extra["lookup_cache_misses"] = self.cache.misses
        arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.schema])
        if not found:
            return arrow_schema.empty_table()
        return pa.concat_tables([t.cast(arrow_schema) for t in found])

    def _shape(self, rows: pa.Table) -> pa.Table:
        """Looked-up table rows → the join's right rows (pushed filters and projections)."""
        if self.right_condition is None and self.right_projections is None:
            return rows

        batch = rows.combine_chunks().to_batches()
        if not batch:
            types = self.rtypes
            return pa.table({f"c{i}": pa.array([], t) for i, t in enumerate(types)})
        b = batch[0]
        if self.right_condition is not None:
            ok = evaluate(self.right_condition, b, eval_context(self.ctx, b.num_rows))
            b = b.filter(ok.fill_null(False))
        if self.right_projections is None:
            return pa.Table.from_batches([b])
        ectx = eval_context(self.ctx, b.num_rows)
        cols = [evaluate(e, b, ectx) for e in self.right_projections]
        return pa.table({f"c{i}": c for i, c in enumerate(cols)})

    def _fill_cache(self, asked: pa.Table, loaded: pa.Table) -> None:
        """Cache the loaded rows per asked key (keys without rows cache an empty table)."""
        n = asked.num_rows
        li, ri = key_pairs(list(asked.columns), [loaded.column(k) for k in self.table_keys], n, loaded.num_rows)
        keys = [tuple(r.values()) for r in asked.to_pylist()]
        order = np.argsort(li, kind="stable")
        li, ri = li[order], ri[order]
        bounds = np.searchsorted(li, np.arange(n + 1))
        for i, k in enumerate(keys):
            idx = ri[bounds[i] : bounds[i + 1]]
            self.cache.put(k, loaded.take(pa.array(idx, type=pa.int64())))

    # ------------------------------------------------------------------ input
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        kinds = row_kinds(batch)
        key_cols = [data.column(k) for k in self.left_keys]
        probe = pa.table({f"k{i}": c for i, c in enumerate(key_cols)})
        probe = probe.drop_null() if any(c.null_count for c in key_cols) else probe
        distinct = probe.group_by(probe.column_names, use_threads=False).aggregate([])
        right = self._shape(self._rows_for(distinct)) if distinct.num_rows else None
        if right is not None and right.num_rows:
            li, ri = key_pairs(key_cols, [right.column(k) for k in self.right_keys], n, right.num_rows)
        else:
            li = ri = np.zeros(0, dtype=np.int64)
        if self.condition is not None and len(li):
            assert right is not None
            mask = residual_mask(self.condition, gather(data, li), gather(right, ri), self.ctx)
            assert mask is not None
            li, ri = li[mask], ri[mask]
        if self.kind == "LEFT":
            hit = np.zeros(n, dtype=bool)
            hit[li] = True
            miss = np.flatnonzero(~hit)
            li = np.concatenate([li, miss])
            ri = np.concatenate([ri, np.full(len(miss), -1, dtype=np.int64)])
            order = np.argsort(li, kind="stable")
            li, ri = li[order], ri[order]
        out_batch = joined_batch(self.node, data, right, li, ri, self.ltypes, self.rtypes, kinds=kinds[li])
        if out_batch is not None:
            out.emit(out_batch)

    def snapshot_state(self, checkpoint_id: int) -> Any:
        return None


class LookupJoinSpec(OperatorSpec[LookupJoinParams]):
    """Processing-time lookups: stateless (the cache is not state), runs per subtask on the
    probe rows that reach it; the probe's changelog passes through."""

    name = "LookupJoin"
    forwards_update_before = True  # row-wise: each row keeps its kind
    params_type = LookupJoinParams
    operator_class = LookupJoinOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(False, False, "Not mapped.")

    def upsert_keys(self, node: PlanView, inputs: Sequence[UpsertKeys]) -> UpsertKeys:
        """A lookup by the looked-up table's PRIMARY KEY meets at most one row per probe row:
        the probe's upsert keys stay keys of the output (its columns come first), as Flink's
        FlinkRelMdUpsertKeys keeps them. Otherwise none is known."""
        if node.info.get("lookup_by_primary_key") and inputs[0]:
            return inputs[0]
        return None

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        left_names = [f.name for f in node.inputs[0].fields]
        right_names = [f.name for f in node.info.get("right_fields", [])]
        names = unique_names(left_names + right_names)
        nl = p.left_width
        lookup = ", ".join(f"{names[nl + r]}={names[lk]}" for lk, r in zip(p.left_keys, p.right_keys, strict=True))
        parts = [f"table=[{p.table}]", f"joinType=[{join_type_name(p.kind)}]", f"lookup=[{lookup}]"]
        if p.condition is not None:
            parts.append(f"where=[{format_expr(p.condition, names)}]")
        parts.append(f"select=[{', '.join(names[: len(node.fields)])}]")
        return parts


LOOKUP_JOIN = register_spec(LookupJoinSpec())
