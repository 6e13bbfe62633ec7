"""Physical plan: nodes named as Flink names them (TableSourceScan, Calc, WatermarkAssigner,
Exchange, WindowTableFunction, WindowAggregate, GroupAggregate, Values, Union, Sink), with
params already in the JobGraph's shape (docs/architecture.md), so lowering only numbers
them. `to_physical` is the optimizer's "physical" phase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalAggregate,
    LogicalCalc,
    LogicalFilter,
    LogicalJoin,
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
from runtime.config import duration_ms
from runtime.config.core import SOURCE_IDLE_TIMEOUT
from runtime.expr.ir import InputRef
from runtime.graph import BATCH, STREAMING
from runtime.operators.calc import CalcParams
from runtime.operators.spec import OperatorParams, OperatorSpec, spec_of
from runtime.operators.union import ExchangeParams, UnionParams
from runtime.operators.values import ValuesParams
from runtime.types import Field


@dataclass(frozen=True, eq=False)
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

    def with_mode(self, mode: str, inputs: tuple[PhysicalNode, ...]) -> PhysicalNode:
        return replace(self, changelog_mode=mode, inputs=inputs)

    def is_kind(self, spec: OperatorSpec[Any]) -> bool:
        """This node is of kind `spec`."""
        return self.operator == spec.name


def _bounded(connector: str, options: dict[str, str], mode: str) -> bool:
    try:
        from runtime.connectors.base import get_connector

        return bool(get_connector(connector).is_bounded(options))
    except Exception:  # noqa: BLE001 - unknown connector: the runtime reports it when it runs
        return mode == BATCH or "source.monitor-interval" not in options


def scan_changelog_mode(connector: str, options: dict[str, str]) -> str:
    """A scan's changelog mode as its connector declares it for these options ('I' for a
    connector not registered here: the runtime reports it when it runs)."""
    from runtime.connectors.base import get_connector
    from runtime.errors import ConnectorError

    try:
        factory = get_connector(connector)
    except ConnectorError:
        return "I"
    return factory.changelog_mode(options)


def sink_changelog_mode(connector: str, options: dict[str, str]) -> str | None:
    """The changes a sink's connector can write given these options (None: any)."""
    from runtime.connectors.base import get_connector
    from runtime.errors import ConnectorError

    try:
        factory = get_connector(connector)
    except ConnectorError:
        return None
    return None if factory.sink_changelog_mode is None else factory.sink_changelog_mode(options)


Converter = Callable[["PhysicalPlanner", Any], PhysicalNode]
_CONVERTERS: dict[type, Converter] = {}


def register_physical(logical_cls: type) -> Callable[[Converter], Converter]:
    """Register the conversion of a logical node class defined in a `planner.rules` module."""

    def deco(fn: Converter) -> Converter:
        _CONVERTERS[logical_cls] = fn
        return fn

    return deco


class PhysicalPlanner:
    """Logical → physical for one mode ("STREAMING" | "BATCH")."""

    def __init__(self, mode: str, config: dict[str, str]) -> None:
        from planner.rules import load_rules

        load_rules()
        self.mode = mode
        self.config = config

    def convert(self, node: LogicalNode) -> PhysicalNode:
        if isinstance(node, LogicalJoin):
            # Time-bounded joins (interval, temporal, lookup, window) first; the rest fall
            # through to the regular join conversion.
            from planner.rules.time_joins import convert_time_join

            timed = convert_time_join(self, node)
            if timed is not None:
                return timed
        registered = _CONVERTERS.get(type(node))
        if registered is not None:
            return registered(self, node)
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise UnsupportedSqlError(f"{type(node).__name__.removeprefix('Logical')} is not supported yet")
        return method(node)

    # ------------------------------------------------------------------ leaves
    def _LogicalTableScan(self, node: LogicalTableScan) -> PhysicalNode:  # noqa: N802
        t = node.table
        opts = _with_partitions(t)
        bounded = _bounded(t.connector, opts, self.mode)
        if self.mode == BATCH and not bounded:
            raise SqlValidationError(
                f"Querying an unbounded table '{t.name}' in batch mode is not allowed. The table source is unbounded."
            )
        return PhysicalNode(
            "TableSourceScan",
            (),
            node.fields,
            {
                "table": t.name,
                "connector": t.connector,
                "options": opts,
                "physical_schema": list(t.physical_schema),
                "projection": list(node.projection) if node.projection is not None else None,
                "bounded": bounded,
            },
            info={"path": t.path},
        )

    def _LogicalValues(self, node: LogicalValues) -> PhysicalNode:  # noqa: N802
        return PhysicalNode.of(ValuesParams(tuple(tuple(r) for r in node.rows)), (), node.fields)

    # ------------------------------------------------------------------ row-wise
    def _calc(self, node: LogicalNode, exprs: tuple, condition) -> PhysicalNode:  # noqa: ANN001
        child = self.convert(node.inputs[0])
        return PhysicalNode.of(CalcParams(tuple(exprs), condition), (child,), node.fields)

    def _LogicalCalc(self, node: LogicalCalc) -> PhysicalNode:  # noqa: N802
        return self._calc(node, node.exprs, node.condition)

    def _LogicalProject(self, node: LogicalProject) -> PhysicalNode:  # noqa: N802
        return self._calc(node, node.exprs, None)

    def _LogicalFilter(self, node: LogicalFilter) -> PhysicalNode:  # noqa: N802
        ident = tuple(InputRef(i, f.type) for i, f in enumerate(node.input.fields))
        return self._calc(node, ident, node.condition)

    def _LogicalWatermarkAssigner(self, node: LogicalWatermarkAssigner) -> PhysicalNode:  # noqa: N802
        child = self.convert(node.input)
        if self.mode == BATCH:
            return child  # no watermarks in batch mode
        idle = None
        scan = node.input
        while not isinstance(scan, LogicalTableScan) and scan.inputs:
            scan = scan.inputs[0]
        if isinstance(scan, LogicalTableScan):
            idle = scan.table.options_dict.get("scan.watermark.idle-timeout")
        idle_ms = duration_ms(idle, "scan.watermark.idle-timeout") if idle else SOURCE_IDLE_TIMEOUT.get(self.config)
        return PhysicalNode(
            "WatermarkAssigner",
            (child,),
            node.fields,
            {"rowtime_index": node.rowtime_index, "watermark": node.watermark, "idle_timeout_ms": idle_ms or None},
        )

    # ------------------------------------------------------------------ keyed
    def _exchange(self, child: PhysicalNode, keys: list[int]) -> PhysicalNode:
        return PhysicalNode.of(ExchangeParams.on(keys), (child,), child.fields)

    def _LogicalAggregate(self, node: LogicalAggregate) -> PhysicalNode:  # noqa: N802
        child = self.convert(node.input)
        ex = self._exchange(child, list(node.grouping))
        params: dict[str, Any] = {"grouping": list(node.grouping), "aggs": [a.to_param() for a in node.aggs]}
        if node.state_ttl_ms is not None:  # STATE_TTL hint (runtime/state/ttl.py)
            params["state_ttl_ms"] = node.state_ttl_ms
        return PhysicalNode("GroupAggregate", (ex,), node.fields, params, info={"aggs": node.aggs})

    def _check_window(self, node: LogicalWindowAggregate) -> None:
        w = node.window
        if self.mode != STREAMING:
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

    def _LogicalWindowAggregate(self, node: LogicalWindowAggregate) -> PhysicalNode:  # noqa: N802
        self._check_window(node)
        child = self.convert(node.input)
        keys = list(node.grouping) or list(node.window.partition_keys)
        ex = self._exchange(child, keys)
        return PhysicalNode(
            "WindowAggregate",
            (ex,),
            node.fields,
            {
                "window": node.window.to_param(),
                "time_index": node.time_index,
                "grouping": list(node.grouping),
                "aggs": [a.to_param() for a in node.aggs],
                "window_props": list(node.window_props),
            },
            info={"aggs": node.aggs, "legacy": node.legacy},
        )

    def _LogicalWindowTableFunction(self, node: LogicalWindowTableFunction) -> PhysicalNode:  # noqa: N802
        child = self.convert(node.input)
        return PhysicalNode(
            "WindowTableFunction",
            (child,),
            node.fields,
            {"window": node.window.to_param(), "time_index": node.time_index},
        )

    # ------------------------------------------------------------------ others
    def _LogicalUnion(self, node: LogicalUnion) -> PhysicalNode:  # noqa: N802
        return PhysicalNode.of(UnionParams(), tuple(self.convert(c) for c in node.children), node.fields)

    def _LogicalJoin(self, node: LogicalJoin) -> PhysicalNode:  # noqa: N802
        raise UnsupportedSqlError("Joins are not supported yet")

    def _LogicalSink(self, node: LogicalSink) -> PhysicalNode:  # noqa: N802
        child = self.convert(node.input)
        t = node.table
        params: dict[str, Any] = {
            "table": t.name,
            "connector": t.connector,
            "options": _with_partitions(t),
            "schema": list(node.schema),
        }
        if t.primary_key:  # Flink: a sink with a declared PRIMARY KEY upserts on it
            params["primary_key"] = list(t.primary_key)
        return PhysicalNode(
            "Sink", (child,), (), params, info={"path": t.path, "fields": [f.name for f in node.schema]}
        )


def _with_partitions(t: TableInfo) -> dict[str, str]:
    """The table's options, plus `$internal.partition-keys` (comma-separated) for a
    `PARTITIONED BY` table: connectors (filesystem) read and write `k=v/` directories."""
    opts = t.options_dict
    if t.partition_keys:
        opts["$internal.partition-keys"] = ",".join(t.partition_keys)
    return opts


def to_physical(plan: LogicalNode, mode: str, config: dict[str, str] | None = None) -> PhysicalNode:
    """The optimizer's "physical" phase: conversion, then the physical rewrite rules
    (planner.optimizer.physical_rules: two-phase aggregation, mini-batch)."""
    from planner.optimizer.physical_rules import optimize_physical

    return optimize_physical(PhysicalPlanner(mode, config or {}).convert(plan), config or {}, mode)
