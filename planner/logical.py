"""Logical plan nodes: what the binder produces and the optimizer rewrites.

Frozen dataclasses, one per relational operator, each carrying its output `fields` so a
rule never has to recompute a schema. Expressions are runtime IR over the node's (first)
input's fields. Node names follow Calcite/Flink (`LogicalProject`, ...) because EXPLAIN's
"Abstract Syntax Tree" prints them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, replace
from typing import Any

from runtime.expr.ir import Expr, InputRef, Literal, input_refs, remap_refs
from runtime.frozen import frozen_dataclass
from runtime.plan_params import AggCallParams, WindowParams
from runtime.types import DataType, Field


@frozen_dataclass
class AggCall:
    """One aggregate call: `args` and `filter` index the aggregate's input columns."""

    name: str
    args: tuple[int, ...]
    type: DataType
    distinct: bool = False
    filter: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    # How EXPLAIN shows it, e.g. "COUNT(*)" (input names filled in by explain).
    display: str = ""

    def as_params(self) -> AggCallParams:
        """The runtime's typed form (operator params hold these)."""
        return AggCallParams(self.name, tuple(self.args), self.type, self.distinct, self.filter, dict(self.params))


@frozen_dataclass
class WindowSpec:
    """A window as the runtime sees it (docs: WindowSpec)."""

    kind: str  # TUMBLE | HOP | CUMULATE | SESSION
    size_ms: int | None = None
    slide_ms: int | None = None
    step_ms: int | None = None
    offset_ms: int | None = None
    gap_ms: int | None = None
    partition_keys: tuple[int, ...] = ()

    def as_params(self) -> WindowParams:
        """The runtime's typed form (operator params hold these)."""
        return WindowParams(
            self.kind, self.size_ms, self.slide_ms, self.step_ms, self.offset_ms, self.gap_ms, self.partition_keys
        )


@frozen_dataclass
class TableInfo:
    """What a scan or sink needs to know about a catalog table."""

    path: tuple[str, str, str]
    connector: str
    options: tuple[tuple[str, str], ...]
    physical_schema: tuple[Field, ...]
    primary_key: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()  # PARTITIONED BY (filesystem: k=v/ directories)

    @property
    def name(self) -> str:
        return ".".join(self.path)

    @property
    def options_dict(self) -> dict[str, str]:
        return dict(self.options)


# Column mapping of projection pushdown: old output column index -> new index.
Mapping = dict[int, int]
# The pushdown's recursion, handed to `prune_columns`: (input, columns read) -> (input, mapping).
Prune = Callable[["LogicalNode", set[int]], tuple["LogicalNode", Mapping]]


@frozen_dataclass
class LogicalNode:
    """A node of the bound query plan: its output `fields`, and how it prunes columns.
    Rewritten by the optimizer's rules, then converted to physical nodes (planner/physical.py)."""

    fields: tuple[Field, ...]

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return ()

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return self

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        """Projection pushdown (planner/optimizer/projection_pushdown.py): this node keeping
        only what `required` (its output columns read above) needs, its inputs pruned with
        `prune`; returns the new node and old -> new output column indices. The default
        keeps every column of this node (and prunes below it)."""
        inputs = []
        for i in self.inputs:
            child, m = prune(i, set(range(len(i.fields))))
            assert all(k == v for k, v in m.items())
            inputs.append(child)
        node = self.with_inputs(tuple(inputs)) if inputs else self
        return node, {i: i for i in range(len(node.fields))}


@frozen_dataclass
class _Single(LogicalNode):
    """A node with one input (`input`, keyword-only so subclasses keep their own field order)."""

    input: LogicalNode = field(kw_only=True)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])


@frozen_dataclass
class LogicalTableScan(LogicalNode):
    """Reads a table's physical columns; `projection` (indices into the physical schema)
    is filled by projection pushdown."""

    table: TableInfo
    projection: tuple[int, ...] | None = None

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        cols = sorted(required) or [0]
        base = self.projection if self.projection is not None else tuple(range(len(self.table.physical_schema)))
        proj = tuple(base[c] for c in cols)
        fields = tuple(self.fields[c] for c in cols)
        full = proj == tuple(range(len(self.table.physical_schema)))
        return replace(self, fields=fields, projection=None if full else proj), {c: i for i, c in enumerate(cols)}


@frozen_dataclass
class LogicalValues(LogicalNode):
    """Rows of literals: VALUES, and the one-row input of a SELECT without FROM."""

    rows: tuple[tuple[Literal, ...], ...]


def _prune_calc(
    node: LogicalNode, exprs: tuple[Expr, ...], cond: Expr | None, required: set[int], prune: Prune
) -> tuple[LogicalNode, Mapping]:
    """Project / Filter / Calc pruned: a LogicalCalc of the kept projections."""
    (child_in,) = node.inputs
    # Keep one column when nothing is read (COUNT(*)): a batch without columns has no rows.
    node_fields = node.fields
    if not exprs and child_in.fields:
        exprs, node_fields = (InputRef(0, child_in.fields[0].type),), (child_in.fields[0],)
    kept = sorted(required) or [0]
    need: set[int] = set()
    for k in kept:
        need |= input_refs(exprs[k])
    if cond is not None:
        need |= input_refs(cond)
    child, m = prune(child_in, need)
    new_exprs = tuple(remap_refs(exprs[k], m) for k in kept)
    new_cond = remap_refs(cond, m) if cond is not None else None
    fields = tuple(node_fields[k] for k in kept)
    return LogicalCalc(fields=fields, input=child, exprs=new_exprs, condition=new_cond), {
        k: i for i, k in enumerate(kept)
    }


@frozen_dataclass
class LogicalProject(_Single):
    """One expression per output column over its input's columns."""

    exprs: tuple[Expr, ...]

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        return _prune_calc(self, self.exprs, None, required, prune)


@frozen_dataclass
class LogicalFilter(_Single):
    """Keeps the rows whose condition is TRUE (not FALSE, not NULL)."""

    condition: Expr

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        ident = tuple(InputRef(i, f.type) for i, f in enumerate(self.input.fields))
        return _prune_calc(self, ident, self.condition, required, prune)


@frozen_dataclass
class LogicalCalc(_Single):
    """Project + optional filter (what the optimizer fuses Project/Filter into)."""

    exprs: tuple[Expr, ...]
    condition: Expr | None = None

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        return _prune_calc(self, self.exprs, self.condition, required, prune)


@frozen_dataclass
class LogicalWatermarkAssigner(_Single):
    """A table's WATERMARK FOR: the rowtime column and the watermark expression over its row."""

    rowtime_index: int
    watermark: Expr
    idle_timeout_ms: int | None = None

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        need = set(required) | {self.rowtime_index} | input_refs(self.watermark)
        child, m = prune(self.input, need)
        order = sorted(m, key=m.__getitem__)
        fields = tuple(self.fields[i] for i in order)
        new = replace(
            self,
            fields=fields,
            input=child,
            rowtime_index=m[self.rowtime_index],
            watermark=remap_refs(self.watermark, m),
        )
        return new, m


def _agg_columns(grouping: tuple[int, ...], aggs: tuple[AggCall, ...]) -> set[int]:
    need = set(grouping)
    for a in aggs:
        need |= set(a.args)
        if a.filter is not None:
            need.add(a.filter)
    return need


def _remap_agg(a: AggCall, m: Mapping) -> AggCall:
    return replace(a, args=tuple(m[x] for x in a.args), filter=m[a.filter] if a.filter is not None else None)


def _remap_window(w: WindowSpec, m: Mapping) -> WindowSpec:
    return replace(w, partition_keys=tuple(m[k] for k in w.partition_keys))


@frozen_dataclass
class LogicalAggregate(_Single):
    """GROUP BY: output = grouping columns, then one column per aggregate call."""

    grouping: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    # STATE_TTL hint (ms) of the query block; None: `table.exec.state.ttl` applies.
    state_ttl_ms: int | None = None

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        child, m = prune(self.input, _agg_columns(self.grouping, self.aggs))
        aggs = tuple(_remap_agg(a, m) for a in self.aggs)
        new = replace(self, input=child, grouping=tuple(m[g] for g in self.grouping), aggs=aggs)
        return new, {i: i for i in range(len(self.fields))}


@frozen_dataclass
class LogicalWindowTableFunction(_Single):
    """TUMBLE/HOP/CUMULATE/SESSION TVF: input columns + window_start, window_end, window_time."""

    window: WindowSpec
    time_index: int

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        n = len(self.input.fields)
        need = {i for i in required if i < n} | {self.time_index} | set(self.window.partition_keys)
        child, m = prune(self.input, need)
        n_new = len(child.fields)
        out = dict(m)
        for j in range(3):  # window_start, window_end, window_time follow the input columns
            out[n + j] = n_new + j
        order = sorted(out, key=out.__getitem__)
        fields = tuple(self.fields[i] for i in order)
        window = _remap_window(self.window, m)
        return replace(self, fields=fields, input=child, time_index=m[self.time_index], window=window), out


@frozen_dataclass
class LogicalWindowAggregate(_Single):
    """Windowed GROUP BY: output = grouping columns, aggregates, then `window_props`."""

    window: WindowSpec
    time_index: int
    grouping: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    window_props: tuple[str, ...]
    legacy: bool = False

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        need = _agg_columns(self.grouping, self.aggs) | {self.time_index} | set(self.window.partition_keys)
        child, m = prune(self.input, need)
        new = replace(
            self,
            input=child,
            grouping=tuple(m[g] for g in self.grouping),
            aggs=tuple(_remap_agg(a, m) for a in self.aggs),
            time_index=m[self.time_index],
            window=_remap_window(self.window, m),
        )
        return new, {i: i for i in range(len(self.fields))}


@frozen_dataclass
class LogicalUnion(LogicalNode):
    """UNION ALL of its children (UNION, INTERSECT and EXCEPT are `LogicalSetOp`, planner/rules/setops.py)."""

    children: tuple[LogicalNode, ...]
    all: bool = True

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return self.children

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, children=inputs)


@frozen_dataclass
class LogicalJoin(LogicalNode):
    """Bound so names resolve (and errors point at the right column); not executable yet."""

    left: LogicalNode
    right: LogicalNode
    kind: str
    condition: Expr | None
    # STATE_TTL hint (ms) per side (left, right; None: not hinted); planner/binder/hints.py.
    state_ttl_ms: tuple[int | None, int | None] | None = None
    # The hint's values as written ('1d'), for EXPLAIN's `stateTtlHints` (Flink prints them).
    state_ttl_text: tuple[str | None, str | None] | None = None

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, left=inputs[0], right=inputs[1])

    def prune_columns(self, required: set[int], prune: Prune) -> tuple[LogicalNode, Mapping]:
        """Each input keeps the columns read above the join or by its condition (a SEMI /
        ANTI join outputs only its left columns)."""
        nl = len(self.left.fields)
        k = self.kind.upper()
        semi = k in ("SEMI", "ANTI")
        need = set(required) | (input_refs(self.condition) if self.condition is not None else set())
        if type(self.right).__name__ == "LogicalSnapshot":
            # A temporal join's snapshot refers to left columns by index: keep every column.
            need = set(range(nl + len(self.right.fields)))
        left, lm = prune(self.left, {i for i in need if i < nl})
        right, rm = prune(self.right, {i - nl for i in need if i >= nl})
        width = len(left.fields)
        combined = dict(lm)
        combined.update({nl + j: width + k2 for j, k2 in rm.items()})
        order = sorted(combined, key=combined.__getitem__)
        fields = tuple(self.fields[i] for i in order if not (semi and i >= nl))
        cond = remap_refs(self.condition, combined) if self.condition is not None else None
        new = replace(self, left=left, right=right, condition=cond, fields=fields)
        return new, (lm if semi else combined)


@frozen_dataclass
class LogicalSink(_Single):
    """Writes its input into a table (INSERT INTO): the plan's root for an INSERT."""

    table: TableInfo
    # Sink schema (the table's physical columns).
    schema: tuple[Field, ...] = ()


def transform_up(node: LogicalNode, fn) -> LogicalNode:  # noqa: ANN001 - callable(plan)->plan
    """Apply `fn` bottom-up to every node (inputs first)."""
    new_inputs = tuple(transform_up(i, fn) for i in node.inputs)
    if any(a is not b for a, b in zip(new_inputs, node.inputs, strict=True)):
        node = node.with_inputs(new_inputs)
    return fn(node)


def walk(node: LogicalNode):  # noqa: ANN201 - generator of nodes
    yield node
    for i in node.inputs:
        yield from walk(i)
