"""Wall clock → instant with Java's `LocalDateTime.atZone` rules, vectorized.

Flink converts a local date-time to an instant with `atZone(zone)` (CAST to
TIMESTAMP_LTZ, TO_TIMESTAMP_LTZ, UNIX_TIMESTAMP, CONVERT_TZ, ...). Java resolves the two
DST edge cases like this:

* a wall clock inside a gap (spring forward) is shifted forward by the gap's length,
  i.e. it keeps the offset in force *before* the transition: 02:30 in New York on
  2024-03-10 becomes 03:30 EDT. Arrow's `nonexistent="latest"` would give 03:00.
* an ambiguous wall clock (fall back) takes the earlier offset, i.e. the earlier
  instant, which is Arrow's `ambiguous="earliest"`.

Both cases are "the offset before the transition". Arrow's `nonexistent="earliest"`
returns the last instant before the gap, whose offset is exactly that one, so
`wall - offset(assume_timezone(wall, earliest, earliest))` is Java's answer for every
row (outside a gap the assumed instant already has the right offset). Two Arrow kernels
over the whole array, no per-row Python.

Window timers deliberately use other rules (`runtime.operators.window_assign`), matching
Flink's `TimeWindowUtil.toEpochMillsForTimer`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

_UTC_NAMES = frozenset({"UTC", "Z", "GMT", "UT", "Etc/UTC", "+00:00", "-00:00"})


def wall_to_instant(wall: pa.Array, time_zone: str) -> pa.Array:
    """Naive timestamps (wall clocks in `time_zone`, any unit) → timestamp(unit, 'UTC')
    instants, resolving DST gaps and overlaps like Java's `LocalDateTime.atZone`."""
    unit = wall.type.unit
    utc_type = pa.timestamp(unit, tz="UTC")
    if time_zone.strip() in _UTC_NAMES or len(wall) == 0:
        return wall.cast(pa.int64()).cast(utc_type)
    assumed = pc.assume_timezone(wall, timezone=time_zone, ambiguous="earliest", nonexistent="earliest")
    instant = assumed.cast(pa.int64())
    offset = pc.subtract(pc.local_timestamp(assumed).cast(pa.int64()), instant)
    return pc.subtract(wall.cast(pa.int64()), offset).cast(utc_type)


__all__ = ["wall_to_instant"]
