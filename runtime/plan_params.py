"""Typed parameter values that several operator kinds share: a window (the window TVFs,
window aggregates, window Top-N / deduplication / joins) and an aggregate call (group,
window, over and two-phase aggregates). Frozen dataclasses, serialized into the JobGraph
by `runtime.operators.spec` like every operator's params (field name = JSON key)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from runtime.checkpoint.format import register_state_type
from runtime.frozen import frozen_dataclass
from runtime.types import DataType


@register_state_type  # operator state holds them (an aggregate set's calls, ...)
@frozen_dataclass
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
@frozen_dataclass
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
