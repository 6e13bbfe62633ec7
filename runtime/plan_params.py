"""Typed parameter values that several operator kinds share: a window (the window TVFs,
window aggregates, window Top-N / deduplication / joins) and an aggregate call (group,
window, over and two-phase aggregates). Frozen dataclasses, serialized into the JobGraph
by `runtime.operators.spec` like every operator's params (field name = JSON key)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from runtime.checkpoint.format import register_state_type
from runtime.types import DataType


@register_state_type  # operator state holds them (an aggregate set's calls, ...)
@dataclass(frozen=True)
class WindowParams:
    """A window as the runtime assigns it (times in ms). `kind` is TUMBLE | HOP | CUMULATE
    | SESSION; `partition_keys` are input column indexes (a SESSION window's PARTITION BY)."""

    kind: str
    size_ms: int | None = None
    slide_ms: int | None = None
    step_ms: int | None = None
    offset_ms: int | None = None
    gap_ms: int | None = None
    partition_keys: tuple[int, ...] = ()


@register_state_type
@dataclass(frozen=True)
class AggCallParams:
    """One aggregate call: function `name` over input columns `args`, optionally DISTINCT
    and FILTERed by a BOOLEAN input column; `type` is the result type; `params` holds the
    function's extra arguments (LISTAGG's separator, a Python UDAF's descriptor, ...)."""

    name: str
    args: tuple[int, ...]
    type: DataType
    distinct: bool = False
    filter: int | None = None
    params: dict[str, Any] = field(default_factory=dict, hash=False)


def as_agg_call(call: AggCallParams | Mapping[str, Any]) -> AggCallParams:
    """`call` typed. Kinds still handing the untyped dict form to the aggregate layer
    (issue 13: until every kind holding aggregate calls declares a spec) are converted."""
    if isinstance(call, AggCallParams):
        return call
    return AggCallParams(
        name=call["name"],
        args=tuple(call.get("args") or ()),
        type=call["type"],
        distinct=bool(call.get("distinct")),
        filter=call.get("filter"),
        params=dict(call.get("params") or {}),
    )


def as_window(window: WindowParams | Mapping[str, Any]) -> WindowParams:
    """`window` typed (the untyped dict form converted, as for `as_agg_call`)."""
    if isinstance(window, WindowParams):
        return window
    return WindowParams(
        kind=window["kind"],
        size_ms=window.get("size_ms"),
        slide_ms=window.get("slide_ms"),
        step_ms=window.get("step_ms"),
        offset_ms=window.get("offset_ms"),
        gap_ms=window.get("gap_ms"),
        partition_keys=tuple(window.get("partition_keys") or ()),
    )
