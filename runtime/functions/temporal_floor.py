"""FLOOR(x TO unit) / CEIL(x TO unit) on TIMESTAMP, TIMESTAMP_LTZ and DATE.

The binder turns `FLOOR(ts TO HOUR)` into `floor_time(ts, 'HOUR')` (and CEIL into
`ceil_time`). Semantics follow Flink (Calcite's DateTimeUtils): the value is rounded down
(up) to a multiple of the unit on the calendar; a value already on a boundary stays
as it is for CEIL; WEEK starts on Sunday. TIMESTAMP rounds its wall-clock value;
TIMESTAMP_LTZ rounds in the session time zone (so FLOOR(... TO DAY) is local midnight)
and stays an instant; DATE rounds to a DATE. The result has the argument's type.

Vectorized with Arrow's floor_temporal / ceil_temporal over the whole column.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from runtime.functions._common import to_array
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, scalar
from runtime.functions.temporal import normalize_zone
from runtime.types import DataType

# Flink's TimeIntervalUnit / TimeUnitRange names -> Arrow's calendar units.
UNITS = {
    "MILLENNIUM": ("year", 1000),
    "CENTURY": ("year", 100),
    "DECADE": ("year", 10),
    "YEAR": ("year", 1),
    "QUARTER": ("quarter", 1),
    "MONTH": ("month", 1),
    "WEEK": ("week", 1),
    "DAY": ("day", 1),
    "HOUR": ("hour", 1),
    "MINUTE": ("minute", 1),
    "SECOND": ("second", 1),
    "MILLISECOND": ("millisecond", 1),
    "MICROSECOND": ("microsecond", 1),
}


def _infer(name: str):
    def infer(types: list[DataType]) -> DataType:
        t = types[0]
        if t.name not in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE", "NULL"):
            raise FunctionTypeError(
                f"Cannot apply '{name}' to arguments of type '{name}(<{t}> TO <TIME UNIT>)'. "
                f"Supported form(s): '{name}(<DATETIME> TO <TIME UNIT>)'"
            )
        return t

    return infer


def _unit_of(v: ArgValue) -> tuple[str, int]:
    raw = v.as_py() if isinstance(v, pa.Scalar) else (v[0].as_py() if len(v) else None)
    unit = str(raw or "").upper()
    if unit not in UNITS:
        raise FunctionTypeError(f"Unsupported time unit '{unit}' for FLOOR/CEIL (expected one of {', '.join(UNITS)})")
    return UNITS[unit]


def round_temporal(x: pa.Array, t: DataType, unit: str, up: bool, time_zone: str) -> pa.Array:
    """FLOOR/CEIL of a whole temporal column (see the module docstring)."""
    arrow_unit, multiple = UNITS[unit]
    op = pc.ceil_temporal if up else pc.floor_temporal
    kw = {"multiple": multiple, "unit": arrow_unit, "week_starts_monday": False}
    if t.name == "DATE":
        ts = x.cast(pa.timestamp("s"))
        return op(ts, **kw).cast(pa.date32())
    if t.name == "TIMESTAMP_LTZ":
        local = x.cast(pa.timestamp(x.type.unit, tz=normalize_zone(time_zone)))
        return op(local, **kw).cast(x.type)
    return op(x, **kw)


def _kernel(up: bool):
    def kernel(args: list[ArgValue], types: list[DataType], rt: DataType, ctx: EvalContext) -> ArgValue:
        unit = next(k for k, v in UNITS.items() if v == _unit_of(args[1]))
        if types[0].name == "NULL":
            return pa.nulls(ctx.num_rows, rt.to_arrow())
        scalar_in = isinstance(args[0], pa.Scalar)
        x = to_array(args[0], 1 if scalar_in else ctx.num_rows)
        out = round_temporal(x, types[0], unit, up, ctx.time_zone)
        return out[0] if scalar_in else out

    return kernel


scalar("floor_time", _infer("FLOOR"))(_kernel(False))
scalar("ceil_time", _infer("CEIL"))(_kernel(True))
