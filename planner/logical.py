"""Logical plan nodes: what the binder produces and the optimizer rewrites.

Frozen dataclasses, one per relational operator, each carrying its output `fields` so a
rule never has to recompute a schema. Expressions are runtime IR over the node's (first)
input's fields. Node names follow Calcite/Flink (`LogicalProject`, ...) because EXPLAIN's
"Abstract Syntax Tree" prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from runtime.expr.ir import Expr, Literal
from runtime.types import DataType, Field


@dataclass(frozen=True)
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

    def to_param(self) -> dict[str, Any]:
        """The JobGraph form documented in docs/architecture.md."""
        return {
            "name": self.name,
            "args": list(self.args),
            "distinct": self.distinct,
            "filter": self.filter,
            "type": self.type,
            "params": dict(self.params),
        }


@dataclass(frozen=True)
class WindowSpec:
    """A window as the runtime sees it (docs: WindowSpec)."""

    kind: str  # TUMBLE | HOP | CUMULATE | SESSION
    size_ms: int | None = None
    slide_ms: int | None = None
    step_ms: int | None = None
    offset_ms: int | None = None
    gap_ms: int | None = None
    partition_keys: tuple[int, ...] = ()

    def to_param(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "size_ms": self.size_ms,
            "slide_ms": self.slide_ms,
            "step_ms": self.step_ms,
            "offset_ms": self.offset_ms,
            "gap_ms": self.gap_ms,
            "partition_keys": list(self.partition_keys),
        }


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class LogicalNode:
    fields: tuple[Field, ...]

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return ()

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return self


@dataclass(frozen=True)
class _Single(LogicalNode):
    input: LogicalNode = field(kw_only=True)

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])


@dataclass(frozen=True)
class LogicalTableScan(LogicalNode):
    """Reads a table's physical columns; `projection` (indices into the physical schema)
    is filled by projection pushdown."""

    table: TableInfo
    projection: tuple[int, ...] | None = None


@dataclass(frozen=True)
class LogicalValues(LogicalNode):
    rows: tuple[tuple[Literal, ...], ...]


@dataclass(frozen=True)
class LogicalProject(_Single):
    exprs: tuple[Expr, ...]


@dataclass(frozen=True)
class LogicalFilter(_Single):
    condition: Expr


@dataclass(frozen=True)
class LogicalCalc(_Single):
    """Project + optional filter (what the optimizer fuses Project/Filter into)."""

    exprs: tuple[Expr, ...]
    condition: Expr | None = None


@dataclass(frozen=True)
class LogicalWatermarkAssigner(_Single):
    rowtime_index: int
    watermark: Expr
    idle_timeout_ms: int | None = None


@dataclass(frozen=True)
class LogicalAggregate(_Single):
    """GROUP BY: output = grouping columns, then one column per aggregate call."""

    grouping: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    # STATE_TTL hint (ms) of the query block; None: `table.exec.state.ttl` applies.
    state_ttl_ms: int | None = None


@dataclass(frozen=True)
class LogicalWindowTableFunction(_Single):
    """TUMBLE/HOP/CUMULATE/SESSION TVF: input columns + window_start, window_end, window_time."""

    window: WindowSpec
    time_index: int


@dataclass(frozen=True)
class LogicalWindowAggregate(_Single):
    """Windowed GROUP BY: output = grouping columns, aggregates, then `window_props`."""

    window: WindowSpec
    time_index: int
    grouping: tuple[int, ...]
    aggs: tuple[AggCall, ...]
    window_props: tuple[str, ...]
    legacy: bool = False


@dataclass(frozen=True)
class LogicalUnion(LogicalNode):
    children: tuple[LogicalNode, ...]
    all: bool = True

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return self.children

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, children=inputs)


@dataclass(frozen=True)
class LogicalJoin(LogicalNode):
    """Bound so names resolve (and errors point at the right column); not executable yet."""

    left: LogicalNode
    right: LogicalNode
    kind: str
    condition: Expr | None
    # STATE_TTL hint (ms) per side (left, right; None: not hinted); planner/binder/hints.py.
    state_ttl_ms: tuple[int | None, int | None] | None = None

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.left, self.right)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, left=inputs[0], right=inputs[1])


@dataclass(frozen=True)
class LogicalSink(_Single):
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
