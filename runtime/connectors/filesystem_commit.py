"""The filesystem sink's 'partition-time' commit trigger: a partition's time extracted from
its values (Flink's default PartitionTimeExtractor) and the watermark read as a wall clock in
'sink.partition-commit.watermark-time-zone'.

A partition commits once the watermark, as a wall-clock time in that zone, is at or past the
partition's time plus 'sink.partition-commit.delay'. The partition time is read from
'partition.time-extractor.timestamp-pattern' with each `$key` replaced by the partition's
value (keys in declared order, as Flink replaces them), or from the first partition value
when no pattern is set; the text is parsed with 'partition.time-extractor.timestamp-formatter'
(a Java DateTimeFormatter pattern; a date-only text is midnight) or, unset, Flink's lenient
'yyyy-[M]M-[d]d[ [H]H:[m]m:[s]s]'.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa

from runtime.errors import ConnectorError
from runtime.functions.datetime_patterns import parse, parse_default_date, parse_default_timestamp

MS_PER_DAY = 86_400_000


class PartitionTimeTrigger:
    """When partitions commit under 'sink.partition-commit.trigger' = 'partition-time'."""

    def __init__(self, options: dict[str, str], keys: tuple[str, ...] | list[str]) -> None:
        self.keys = list(keys)
        self.pattern = options.get("partition.time-extractor.timestamp-pattern")
        self.formatter = options.get("partition.time-extractor.timestamp-formatter")
        zone = options.get("sink.partition-commit.watermark-time-zone") or "UTC"
        self.zone = _zone(zone)

    def partition_time_ms(self, values: list[str]) -> int:
        """The partition's time as wall-clock epoch ms (its LocalDateTime read as UTC)."""
        if self.pattern is None:
            text = values[0]
        else:
            text = self.pattern
            for key, value in zip(self.keys, values, strict=True):
                text = text.replace("$" + key, value)
        strings = pa.array([text], pa.string())
        if self.formatter is not None:
            ms, ok = parse(strings, self.formatter, lenient=False)
        else:
            ms, ok = parse_default_timestamp(strings)
            if not ok[0]:
                days, ok = parse_default_date(strings)
                ms = days * MS_PER_DAY
        if not ok[0]:
            how = (
                f"'partition.time-extractor.timestamp-formatter' = '{self.formatter}'"
                if self.formatter
                else "the default 'yyyy-MM-dd[ HH:mm:ss]'"
            )
            raise ConnectorError(
                f"Cannot extract the partition time of partition {dict(zip(self.keys, values, strict=True))}: "
                f"'{text}' does not parse with {how} (set 'partition.time-extractor.timestamp-pattern', e.g. "
                "'$dt $hour:00:00')."
            )
        return int(ms[0])

    def watermark_wall_ms(self, watermark_ms: int) -> int:
        """The watermark (epoch ms) as a wall clock in the watermark time zone, in epoch ms."""
        if self.zone is None:
            return watermark_ms
        try:
            instant = dt.datetime.fromtimestamp(watermark_ms / 1000, tz=dt.UTC)
        except (OverflowError, OSError, ValueError):
            return watermark_ms  # the end of input's maximum watermark
        offset = instant.astimezone(self.zone).utcoffset() or dt.timedelta(0)
        return watermark_ms + int(offset.total_seconds() * 1000)


def _zone(name: str) -> dt.tzinfo | None:
    """None for UTC; else the zone ('Asia/Shanghai', or a custom id such as 'GMT-08:00')."""
    if name.upper() in ("UTC", "GMT", "Z"):
        return None
    text = name
    for prefix in ("GMT", "UTC"):
        if text.upper().startswith(prefix) and text[len(prefix) : len(prefix) + 1] in ("+", "-"):
            text = text[len(prefix) :]
    if text[:1] in ("+", "-"):
        hours, _, minutes = text[1:].partition(":")
        try:
            sign = 1 if text[0] == "+" else -1
            delta = dt.timedelta(hours=int(hours), minutes=int(minutes or 0)) * sign
        except ValueError:
            raise _bad_zone(name) from None
        return dt.timezone(delta)
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise _bad_zone(name) from None


def _bad_zone(name: str) -> ConnectorError:
    return ConnectorError(
        f"Invalid value for option 'sink.partition-commit.watermark-time-zone': '{name}'. It should be a full "
        "time zone name such as 'America/Los_Angeles' or a custom id such as 'GMT-08:00'."
    )
