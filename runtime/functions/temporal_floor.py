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
from runtime.functions.registry import ArgValue, EvalContext, FunctionTypeError, document, scalar
from runtime.functions.temporal import normalize_zone
from runtime.render import local_time
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
        if t.name not in ("TIMESTAMP", "TIMESTAMP_LTZ", "DATE", "TIME", "NULL"):
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
    if t.name == "TIME":
        # milliseconds of the day, rounded as a timestamp on 1970-01-01; CEIL past the
        # last unit of the day wraps to 00:00 as Flink's int arithmetic does
        ms = pc.cast(x.cast(pa.int32()), pa.int64())
        rounded = op(ms.cast(pa.timestamp("ms")), **kw).cast(pa.int64())
        return pc.cast(
            pc.cast(pc.subtract(rounded, pc.multiply(pc.divide(rounded, 86_400_000), 86_400_000)), pa.int32()), x.type
        )
    if t.name == "TIMESTAMP_LTZ":
        # Flink rounds the wall clock of the instant's own UTC offset and subtracts that
        # same offset again (so across a DST change the result keeps the original offset:
        # FLOOR(2024-03-31 03:00 CEST TO DAY) is 2024-03-30 23:00 CET in Berlin)
        unit_ts = pa.timestamp(x.type.unit)
        utc = x.cast(unit_ts).cast(pa.int64())
        wall = local_time(x, normalize_zone(time_zone)).cast(unit_ts).cast(pa.int64())
        offset = pc.subtract(wall, utc)
        rounded = op(wall.cast(unit_ts), **kw).cast(pa.int64())
        return pc.subtract(rounded, offset).cast(unit_ts).cast(x.type)
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


# docs/functions.md: signature and one example per function of this module
document(
    {
        "floor_time": ("FLOOR(datetime TO unit)", "FLOOR(TIMESTAMP '2024-05-17 10:45:00' TO HOUR)"),
        "ceil_time": ("CEIL(datetime TO unit)", "CEIL(TIMESTAMP '2024-05-17 10:45:00' TO HOUR)"),
    }
)
