"""Physical plan: nodes named as Flink names them (TableSourceScan, Calc, WatermarkAssigner,
Exchange, WindowTableFunction, WindowAggregate, GroupAggregate, Values, Union, Sink), with
params already in the JobGraph's shape (docs/architecture.md), so lowering only numbers
them. The optimizer's "physical" phase is `planner.optimizer.physical_rules.to_physical`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field, replace
from typing import Any

from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalAggregate,
    LogicalCalc,
    LogicalFilter,
    LogicalNode,
    LogicalProject,
    LogicalSink,
    LogicalTableScan,
    LogicalUnion,
    LogicalValues,
    LogicalWatermarkAssigner,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    TableInfo,
)
from planner.rules import load_rules
from runtime.config import duration_ms
from runtime.config.core import SOURCE_CDC_EVENTS_DUPLICATE, SOURCE_IDLE_TIMEOUT
from runtime.connectors.base import SINK_PARALLELISM, get_connector
from runtime.errors import ConnectorError
from runtime.expr.ir import Expr, InputRef, remap_refs
from runtime.frozen import frozen_dataclass
from runtime.graph import BATCH, STREAMING
from runtime.operators.calc import CalcParams
from runtime.operators.sink import SinkParams
from runtime.operators.source import TableSourceScanParams, scan_changelog_mode
from runtime.operators.spec import ANY, OperatorParams, OperatorSpec, spec_for, spec_of
from runtime.operators.union import EXCHANGE, ExchangeParams, UnionParams
from runtime.operators.values import ValuesParams
from runtime.operators.watermark import WatermarkAssignerParams
from runtime.types import Field

# The operator modules of aggregations, windows and normalized scans are imported by the
# converters that build their nodes (start-up: `SELECT 1` loads none of them, nor what
# they load: aggregate functions, window slicing, state restore).


@frozen_dataclass(eq=False)
class PhysicalNode:
    """One physical operator: `params` are exactly the JobGraph node's params, the typed
    params dataclass of the operator's kind (runtime/operators/spec.py). Build one with
    `PhysicalNode.of(params, ...)`: the operator name comes from the params class."""

    operator: str
    inputs: tuple[PhysicalNode, ...]
    fields: tuple[Field, ...]
    # An `OperatorParams` (a plain dict for a kind without a spec yet).
    params: Any = field(default_factory=dict)
    changelog_mode: str = "I"
    # Extra facts EXPLAIN prints but the runtime does not need (e.g. the agg output names).
    info: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(
        params: OperatorParams,
        inputs: Sequence[PhysicalNode],
        fields: Sequence[Field],
        info: dict[str, Any] | None = None,
    ) -> PhysicalNode:
        """A node of the kind whose params class `params` is."""
        return PhysicalNode(spec_of(params).name, tuple(inputs), tuple(fields), params, info=info or {})

    @staticmethod
    def distributed(
        params: OperatorParams,
        inputs: Sequence[PhysicalNode],
        fields: Sequence[Field],
        info: dict[str, Any] | None = None,
    ) -> PhysicalNode:
        """`PhysicalNode.of`, with every input fed through the Exchange the kind's spec
        requires (`input_distribution` KEYED: hash on `input_keys`; SINGLE: all rows to
        one subtask). The only place the planner decides data distribution."""
        spec = spec_of(params)
        return PhysicalNode.of(
            params, tuple(_distribute(spec, params, i, child) for i, child in enumerate(inputs)), fields, info
        )

    def with_mode(self, mode: str, inputs: tuple[PhysicalNode, ...]) -> PhysicalNode:
        return replace(self, changelog_mode=mode, inputs=inputs)

    def is_kind(self, spec: OperatorSpec[Any]) -> bool:
        """This node is of kind `spec`."""
        return self.operator == spec.name


def required_exchange(spec: OperatorSpec[Any], params: OperatorParams, input_index: int) -> ExchangeParams | None:
    """The Exchange input `input_index` of a `spec` node with `params` must come through
    (None: any distribution will do)."""
    if spec.input_distribution == ANY:
        return None
    return ExchangeParams.on(spec.input_keys(params, input_index))


def _distribute(spec: OperatorSpec[Any], params: OperatorParams, input_index: int, child: PhysicalNode) -> PhysicalNode:
    exchange = required_exchange(spec, params, input_index)
    if exchange is None or (child.is_kind(EXCHANGE) and child.params == exchange):
        return child
    return PhysicalNode.of(exchange, (child,), child.fields)


def check_distribution(plan: PhysicalNode) -> None:
    """Every node is fed through the Exchange its spec requires (the executors rely on
    the plan's Exchanges; a rule that rebuilt a keyed node without `distributed` is a
    planner bug, reported here rather than as a wrong result at parallelism > 1)."""
    seen: set[int] = set()

    def visit(n: PhysicalNode) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        spec = spec_for(n.operator)
        for i, child in enumerate(n.inputs):
            exchange = required_exchange(spec, n.params, i) if spec is not None else None
            if exchange is not None and not (child.is_kind(EXCHANGE) and child.params == exchange):
                raise AssertionError(f"planner bug: input {i} of {n.operator} is not distributed as {exchange}")
            visit(child)

    visit(plan)


def _bounded(connector: str, options: dict[str, str], mode: str) -> bool:
    try:
        return bool(get_connector(connector).is_bounded(options))
    except Exception:  # noqa: BLE001 - unknown connector: the runtime reports it when it runs
        return mode == BATCH or "source.monitor-interval" not in options


Converter = Callable[["PhysicalPlanner", Any], PhysicalNode]
_CONVERTERS: dict[type, Converter] = {}


def register_physical(logical_cls: type) -> Callable[[Converter], Converter]:
    """Register the conversion of a logical node class defined in a `planner.rules` module."""

    def deco(fn: Converter) -> Converter:
        _CONVERTERS[logical_cls] = fn
        return fn

    return deco


class PhysicalPlanner:
    """Logical → physical for one mode ("STREAMING" | "BATCH"). Every logical node class
    has one converter, registered with `register_physical` (the core ones below, the
    others in their `planner.rules` module)."""

    def __init__(self, mode: str, config: dict[str, str]) -> None:
        self.mode = mode
        self.config = config

    def convert(self, node: LogicalNode) -> PhysicalNode:
        converter = _CONVERTERS.get(type(node))
        if converter is None:
            # A rule module's logical nodes exist only once it is imported, but a core node
            # (LogicalJoin) may be converted by a rule module: load the rules when a node
            # has no converter yet (start-up: `SELECT 1` loads none of them).
            load_rules()
            converter = _CONVERTERS.get(type(node))
        if converter is None:
            raise UnsupportedSqlError(f"{type(node).__name__.removeprefix('Logical')} is not supported yet")
        return converter(self, node)


# ---------------------------------------------------------------------- leaves
@register_physical(LogicalTableScan)
def _scan(planner: PhysicalPlanner, node: LogicalTableScan) -> PhysicalNode:
    t = node.table
    opts = _with_partitions(t)
    bounded = _bounded(t.connector, opts, planner.mode)
    params = TableSourceScanParams(
        table=t.name,
        connector=t.connector,
        options=opts,
        physical_schema=tuple(t.physical_schema),
        projection=tuple(node.projection) if node.projection is not None else None,
        bounded=bounded,
    )
    mode = scan_changelog_mode(t.connector, opts)
    upsert = _is_upsert(mode) or (
        _has_updates(mode) and t.primary_key and SOURCE_CDC_EVENTS_DUPLICATE.get(planner.config)
    )
    if not upsert:
        return PhysicalNode.of(params, (), node.fields, info={"path": t.path, "primary_key": t.primary_key})
    return _normalized_scan(planner, node, params, mode)


def _is_upsert(mode: str) -> bool:
    """An upsert changelog: updates without their -U (upsert-kafka emits +I/+U and -D)."""
    kinds = set(mode.split(","))
    return "UB" not in kinds and bool(kinds & {"UA", "D"})


def _has_updates(mode: str) -> bool:
    return mode != "I"


def _normalized_scan(
    planner: PhysicalPlanner, node: LogicalTableScan, params: TableSourceScanParams, mode: str
) -> PhysicalNode:
    """STREAMING: an upsert source (or, with `table.exec.source.cdc-events-duplicate`, a CDC
    source with a PRIMARY KEY) read through a ChangelogNormalize keyed by the PRIMARY KEY, as
    Flink plans it. The scan keeps the key columns even when nothing above reads them (a
    Calc drops them again). BATCH: an upsert source is refused as Flink refuses a source that
    is not insert-only; a CDC source is read as the bounded changelog it is."""
    t = node.table
    if planner.mode == BATCH and not _is_upsert(mode):
        return PhysicalNode.of(params, (), node.fields, info={"path": t.path})  # a CDC changelog: applied as is
    if planner.mode == BATCH:
        raise UnsupportedSqlError(
            "Querying a table in batch mode is currently only possible for INSERT-only table sources. But the "
            f"source for table '{t.name}' produces other changelog messages than just INSERT."
        )
    if not t.primary_key:
        raise SqlValidationError(
            f"Table '{t.name}' produces an upsert changelog ({mode}) and needs a PRIMARY KEY to be normalized "
            "by: declare PRIMARY KEY (...) NOT ENFORCED."
        )
    from runtime.operators.changelog_normalize import ChangelogNormalizeParams

    names = [f.name for f in t.physical_schema]
    pk = [names.index(k) for k in t.primary_key]
    proj = list(node.projection) if node.projection is not None else list(range(len(names)))
    wanted = len(proj)
    proj += [k for k in pk if k not in proj]
    full = proj == list(range(len(names)))
    scan_fields = tuple(t.physical_schema[i] for i in proj)
    scan = PhysicalNode.of(
        replace(params, projection=None if full else tuple(proj)), (), scan_fields, info={"path": t.path}
    )
    keys = tuple(proj.index(k) for k in pk)
    normalized = PhysicalNode.distributed(ChangelogNormalizeParams(keys), (scan,), scan_fields)
    if len(proj) == wanted:
        return normalized
    exprs = tuple(InputRef(i, f.type) for i, f in enumerate(scan_fields[:wanted]))
    return PhysicalNode.of(CalcParams(exprs, None), (normalized,), node.fields)


@register_physical(LogicalValues)
def _values(planner: PhysicalPlanner, node: LogicalValues) -> PhysicalNode:
    return PhysicalNode.of(ValuesParams(tuple(tuple(r) for r in node.rows)), (), node.fields)


# ---------------------------------------------------------------------- row-wise
def _calc(planner: PhysicalPlanner, node: LogicalNode, exprs: tuple[Expr, ...], condition: Expr | None) -> PhysicalNode:
    child = planner.convert(node.inputs[0])
    if _drops_trailing_columns(child):
        child = child.inputs[0]  # e.g. the key columns kept for a ChangelogNormalize: read below it
    elif child.info.get("drops_columns") and isinstance(child.params, CalcParams):
        # e.g. a join's computed key columns (planner/rules/joins.py): read below, one Calc
        picks = {i: e.index for i, e in enumerate(child.params.projections) if isinstance(e, InputRef)}
        exprs = tuple(remap_refs(e, picks) for e in exprs)
        condition = remap_refs(condition, picks) if condition is not None else None
        child = child.inputs[0]
    return PhysicalNode.of(CalcParams(tuple(exprs), condition), (child,), node.fields)


def _drops_trailing_columns(node: PhysicalNode) -> bool:
    """`node` is a Calc that only drops its input's last columns (the columns a Calc above
    reads keep their positions, so that Calc can read the input directly)."""
    p = node.params
    return (
        isinstance(p, CalcParams)
        and p.condition is None
        and all(isinstance(e, InputRef) and e.index == i for i, e in enumerate(p.projections))
    )


@register_physical(LogicalCalc)
def _logical_calc(planner: PhysicalPlanner, node: LogicalCalc) -> PhysicalNode:
    return _calc(planner, node, node.exprs, node.condition)


@register_physical(LogicalProject)
def _project(planner: PhysicalPlanner, node: LogicalProject) -> PhysicalNode:
    return _calc(planner, node, node.exprs, None)


@register_physical(LogicalFilter)
def _filter(planner: PhysicalPlanner, node: LogicalFilter) -> PhysicalNode:
    ident = tuple(InputRef(i, f.type) for i, f in enumerate(node.input.fields))
    return _calc(planner, node, ident, node.condition)


@register_physical(LogicalWatermarkAssigner)
def _watermark(planner: PhysicalPlanner, node: LogicalWatermarkAssigner) -> PhysicalNode:
    child = planner.convert(node.input)
    if planner.mode == BATCH:
        return child  # no watermarks in batch mode
    idle = None
    scan = node.input
    while not isinstance(scan, LogicalTableScan) and scan.inputs:
        scan = scan.inputs[0]
    if isinstance(scan, LogicalTableScan):
        idle = scan.table.options_dict.get("scan.watermark.idle-timeout")
    idle_ms = duration_ms(idle, "scan.watermark.idle-timeout") if idle else SOURCE_IDLE_TIMEOUT.get(planner.config)
    params = WatermarkAssignerParams(node.rowtime_index, node.watermark, idle_ms or None)
    normalized = _below_normalize(child, params)
    if normalized is not None:
        return normalized
    return PhysicalNode.of(params, (_split_watermarks(child),), node.fields)


def _below_normalize(child: PhysicalNode, params: WatermarkAssignerParams) -> PhysicalNode | None:
    """A normalized scan (Calcs without a condition <- ChangelogNormalize <- Exchange <- scan)
    rebuilt with the WatermarkAssigner under the Exchange, as Flink generates an upsert
    source's watermarks in the source: per partition, before rows are re-distributed by key
    (an assigner after the Exchange would see only its subtask's keys). The Calcs (computed
    columns such as the rowtime) move below the Exchange too, carrying the key columns at
    their end; a Calc drops those again. None for any other input."""
    calcs: list[PhysicalNode] = []
    n = child
    while isinstance(n.params, CalcParams) and n.params.condition is None and n.inputs:
        calcs.append(n)
        n = n.inputs[0]
    if not (n.inputs and n.inputs[0].is_kind(EXCHANGE)):
        return None
    from runtime.operators.changelog_normalize import CHANGELOG_NORMALIZE, ChangelogNormalizeParams

    if not n.is_kind(CHANGELOG_NORMALIZE):
        return None
    scan = n.inputs[0].inputs[0]
    if not isinstance(scan.params, TableSourceScanParams):
        return None
    cur, carried = scan, list(ChangelogNormalizeParams.of(n).keys)
    for calc in reversed(calcs):
        exprs = list(calc.params.projections)
        fields = list(calc.fields)
        moved: list[int] = []
        for k in carried:
            at = [i for i, e in enumerate(exprs) if isinstance(e, InputRef) and e.index == k]
            if not at:
                exprs.append(InputRef(k, cur.fields[k].type))
                fields.append(cur.fields[k])
            moved.append(at[0] if at else len(exprs) - 1)
        cur, carried = PhysicalNode.of(CalcParams(tuple(exprs), None), (cur,), fields), moved
    assigner = PhysicalNode.of(params, (_split_watermarks(cur),), cur.fields)
    normalized = PhysicalNode.distributed(ChangelogNormalizeParams(tuple(carried)), (assigner,), cur.fields)
    if len(cur.fields) == len(child.fields):
        return normalized
    keep = tuple(InputRef(i, f.type) for i, f in enumerate(child.fields))
    return PhysicalNode.of(CalcParams(keep, None), (normalized,), child.fields)


def _split_watermarks(node: PhysicalNode) -> PhysicalNode:
    """The WatermarkAssigner's input with its scan (below Calcs) asked to tag rows with
    their split, when the connector generates watermarks per split (Kafka partitions)."""
    if isinstance(node.params, CalcParams) and node.inputs:
        return replace(node, inputs=(_split_watermarks(node.inputs[0]),))
    if not isinstance(node.params, TableSourceScanParams):
        return node
    try:
        per_split = get_connector(node.params.connector).split_watermarks
    except ConnectorError:
        return node
    return replace(node, params=replace(node.params, split_watermarks=True)) if per_split else node


# ---------------------------------------------------------------------- keyed
@register_physical(LogicalAggregate)
def _aggregate(planner: PhysicalPlanner, node: LogicalAggregate) -> PhysicalNode:
    from runtime.operators.group_agg import GroupAggregateParams

    child = planner.convert(node.input)
    # state_ttl_ms: a STATE_TTL hint (runtime/state/ttl.py), None when not hinted.
    params = GroupAggregateParams(tuple(node.grouping), tuple(a.as_params() for a in node.aggs), node.state_ttl_ms)
    return PhysicalNode.distributed(params, (child,), node.fields, info={"aggs": node.aggs})


def _check_window(planner: PhysicalPlanner, node: LogicalWindowAggregate) -> None:
    w = node.window
    if planner.mode != STREAMING:
        return
    if w.kind == "HOP" and w.size_ms is not None and w.slide_ms and w.size_ms % w.slide_ms != 0:
        raise SqlValidationError(
            "HOP table function based aggregate requires size must be an integral multiple of slide, "
            f"but got size {w.size_ms} ms and slide {w.slide_ms} ms"
        )
    if w.kind == "CUMULATE" and w.size_ms is not None and w.step_ms and w.size_ms % w.step_ms != 0:
        raise SqlValidationError(
            "CUMULATE table function based aggregate requires maxSize must be an integral multiple of step, "
            f"but got maxSize {w.size_ms} ms and step {w.step_ms} ms"
        )


@register_physical(LogicalWindowAggregate)
def _window_aggregate(planner: PhysicalPlanner, node: LogicalWindowAggregate) -> PhysicalNode:
    from runtime.operators.window_agg import WindowAggregateParams

    _check_window(planner, node)
    child = planner.convert(node.input)
    params = WindowAggregateParams(
        node.window.as_params(),
        node.time_index,
        tuple(node.grouping),
        tuple(a.as_params() for a in node.aggs),
        tuple(node.window_props),
        proctime=node.input.fields[node.time_index].type.time_attr == "PROCTIME",
    )
    return PhysicalNode.distributed(params, (child,), node.fields, info={"aggs": node.aggs, "legacy": node.legacy})


@register_physical(LogicalWindowTableFunction)
def _window_tvf(planner: PhysicalPlanner, node: LogicalWindowTableFunction) -> PhysicalNode:
    child = planner.convert(node.input)
    if node.window.kind == "SESSION":  # rows wait for their session to close: keyed, stateful
        from runtime.operators.session_tvf import SessionWindowTableFunctionParams

        session = SessionWindowTableFunctionParams(node.window.as_params(), node.time_index)
        return PhysicalNode.distributed(session, (child,), node.fields)
    from runtime.operators.window_tvf import WindowTableFunctionParams

    params = WindowTableFunctionParams(node.window.as_params(), node.time_index)
    return PhysicalNode.of(params, (child,), node.fields)


# ---------------------------------------------------------------------- others
@register_physical(LogicalUnion)
def _union(planner: PhysicalPlanner, node: LogicalUnion) -> PhysicalNode:
    return PhysicalNode.of(UnionParams(), tuple(planner.convert(c) for c in node.children), node.fields)


@register_physical(LogicalSink)
def _sink(planner: PhysicalPlanner, node: LogicalSink) -> PhysicalNode:
    child = planner.convert(node.input)
    t = node.table
    # Flink: a sink with a declared PRIMARY KEY upserts on it.
    options = _with_partitions(t)
    parallelism = SINK_PARALLELISM.get(options) if SINK_PARALLELISM.is_set(options) else None
    params = SinkParams(t.name, t.connector, options, tuple(node.schema), tuple(t.primary_key), parallelism)
    return PhysicalNode.of(params, (child,), (), info={"path": t.path, "fields": [f.name for f in node.schema]})


def _with_partitions(t: TableInfo) -> dict[str, str]:
    """The table's options, plus `$internal.partition-keys` (comma-separated) for a
    `PARTITIONED BY` table: connectors (filesystem) read and write `k=v/` directories."""
    opts = t.options_dict
    if t.partition_keys:
        opts["$internal.partition-keys"] = ",".join(t.partition_keys)
    return opts
