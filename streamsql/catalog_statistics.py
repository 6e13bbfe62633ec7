"""Table and column statistics as Flink's catalogs keep them (`ANALYZE TABLE` computes
them, `Catalog.get_table_statistics` / `get_table_column_statistics` / the partition
forms read them).

The value classes carry PyFlink's names: `CatalogTableStatistics` and
`CatalogColumnStatistics` as pyflink.table.catalog has them; the per-column data
(`CatalogColumnStatisticsDataLong`, `...Double`, `...Date`, `...String`, `...Binary`,
`...Boolean`) are Java objects in PyFlink, reached with Java's getters (`getNdv()`,
`getNullCount()`, ...), so they keep those getters here, next to snake_case fields.

Catalog stores (planner.catalog_store) keep statistics as JSON (`table_statistics_json`,
`column_statistics_json` and their inverses), so a persistent catalog keeps them across
restarts without knowing these classes.
"""

from __future__ import annotations

from dataclasses import asdict, field, fields, replace
from typing import Any, ClassVar

from runtime.frozen import frozen_dataclass

__all__ = [
    "CatalogColumnStatistics",
    "CatalogColumnStatisticsDataBase",
    "CatalogColumnStatisticsDataBinary",
    "CatalogColumnStatisticsDataBoolean",
    "CatalogColumnStatisticsDataDate",
    "CatalogColumnStatisticsDataDouble",
    "CatalogColumnStatisticsDataLong",
    "CatalogColumnStatisticsDataString",
    "CatalogTableStatistics",
    "Date",
]


class CatalogTableStatistics:
    """Row count, file count, total size and raw data size of a table or partition; -1
    where unknown (Flink's `CatalogTableStatistics.UNKNOWN` is all -1; ANALYZE TABLE sets
    only the row count)."""

    def __init__(
        self,
        row_count: int | None = None,
        field_count: int | None = None,
        total_size: int | None = None,
        raw_data_size: int | None = None,
        properties: dict[str, str] | None = None,
        j_catalog_table_statistics: Any = None,
    ) -> None:
        self._v = (row_count, field_count, total_size, raw_data_size, dict(properties or {}))

    @staticmethod
    def unknown() -> CatalogTableStatistics:
        return CatalogTableStatistics(-1, -1, -1, -1)

    def get_row_count(self) -> int | None:
        return self._v[0]

    def get_field_count(self) -> int | None:
        """The number of files (PyFlink's name for Java's getFileCount)."""
        return self._v[1]

    def get_total_size(self) -> int | None:
        return self._v[2]

    def get_raw_data_size(self) -> int | None:
        return self._v[3]

    def get_properties(self) -> dict[str, str]:
        return dict(self._v[4])

    def copy(self) -> CatalogTableStatistics:
        return CatalogTableStatistics(*self._v[:4], properties=self._v[4])

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CatalogTableStatistics) and other._v == self._v

    def __hash__(self) -> int:
        return hash(self._v[:4])

    def __repr__(self) -> str:
        r, f, t, s, _ = self._v
        return f"CatalogTableStatistics(rowCount={r}, fileCount={f}, totalSize={t}, rawDataSize={s})"


@frozen_dataclass
class Date:
    """A DATE statistic: days since 1970-01-01 (Flink's stats.Date)."""

    days_since_epoch: int

    def getDaysSinceEpoch(self) -> int:  # noqa: N802 - Java's getter, as PyFlink exposes it
        return self.days_since_epoch


class CatalogColumnStatisticsDataBase:
    """The statistics of one column; `null_count` in every kind."""

    kind: ClassVar[str] = ""
    null_count: int | None
    properties: dict[str, str]

    def getNullCount(self) -> int | None:  # noqa: N802 - Java's getter
        return self.null_count

    def getProperties(self) -> dict[str, str]:  # noqa: N802 - Java's getter
        return dict(self.properties)

    def copy(self) -> CatalogColumnStatisticsDataBase:
        return replace(self, properties=dict(self.properties))  # type: ignore[type-var]


class _RangeGetters:
    """Java's getters of the kinds with a range and a distinct count (Long, Double, Date)."""

    min: Any
    max: Any
    ndv: int | None

    def getMin(self) -> Any:  # noqa: N802 - Java's getter
        return self.min

    def getMax(self) -> Any:  # noqa: N802 - Java's getter
        return self.max

    def getNdv(self) -> int | None:  # noqa: N802 - Java's getter
        return self.ndv


class _LengthGetters:
    """Java's getters of the kinds with lengths (String, Binary)."""

    max_length: int | None
    avg_length: float | None

    def getMaxLength(self) -> int | None:  # noqa: N802 - Java's getter
        return self.max_length

    def getAvgLength(self) -> float | None:  # noqa: N802 - Java's getter
        return self.avg_length


@frozen_dataclass
class CatalogColumnStatisticsDataBoolean(CatalogColumnStatisticsDataBase):
    """BOOLEAN columns."""

    kind: ClassVar[str] = "Boolean"
    true_count: int | None = None
    false_count: int | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)

    def getTrueCount(self) -> int | None:  # noqa: N802 - Java's getter
        return self.true_count

    def getFalseCount(self) -> int | None:  # noqa: N802 - Java's getter
        return self.false_count


@frozen_dataclass
class CatalogColumnStatisticsDataLong(_RangeGetters, CatalogColumnStatisticsDataBase):
    """Integer columns, and the time types as numbers: TIMESTAMP in epoch seconds,
    TIMESTAMP_LTZ in epoch milliseconds, TIME in nanoseconds of the day (as Flink's
    ANALYZE TABLE stores them)."""

    kind: ClassVar[str] = "Long"
    min: int | None = None
    max: int | None = None
    ndv: int | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)


@frozen_dataclass
class CatalogColumnStatisticsDataDouble(_RangeGetters, CatalogColumnStatisticsDataBase):
    """FLOAT, DOUBLE and DECIMAL columns."""

    kind: ClassVar[str] = "Double"
    min: float | None = None
    max: float | None = None
    ndv: int | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)


@frozen_dataclass
class CatalogColumnStatisticsDataDate(_RangeGetters, CatalogColumnStatisticsDataBase):
    """DATE columns."""

    kind: ClassVar[str] = "Date"
    min: Date | None = None
    max: Date | None = None
    ndv: int | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)


@frozen_dataclass
class CatalogColumnStatisticsDataString(_LengthGetters, CatalogColumnStatisticsDataBase):
    """CHAR and VARCHAR columns: lengths in characters."""

    kind: ClassVar[str] = "String"
    max_length: int | None = None
    avg_length: float | None = None
    ndv: int | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)

    def getNdv(self) -> int | None:  # noqa: N802 - Java's getter
        return self.ndv


@frozen_dataclass
class CatalogColumnStatisticsDataBinary(_LengthGetters, CatalogColumnStatisticsDataBase):
    """BINARY and VARBINARY columns (Flink's ANALYZE TABLE fills only the null count)."""

    kind: ClassVar[str] = "Binary"
    max_length: int | None = None
    avg_length: float | None = None
    null_count: int | None = None
    properties: dict[str, str] = field(default_factory=dict, compare=False)


_KINDS: dict[str, type[CatalogColumnStatisticsDataBase]] = {
    c.kind: c
    for c in (
        CatalogColumnStatisticsDataBoolean,
        CatalogColumnStatisticsDataLong,
        CatalogColumnStatisticsDataDouble,
        CatalogColumnStatisticsDataDate,
        CatalogColumnStatisticsDataString,
        CatalogColumnStatisticsDataBinary,
    )
}


class CatalogColumnStatistics:
    """Column name → its statistics data (empty: unknown)."""

    def __init__(
        self,
        column_statistics_data: dict[str, CatalogColumnStatisticsDataBase] | None = None,
        properties: dict[str, str] | None = None,
        j_catalog_column_statistics: Any = None,
    ) -> None:
        self._data, self._properties = dict(column_statistics_data or {}), dict(properties or {})

    def get_column_statistics_data(self) -> dict[str, CatalogColumnStatisticsDataBase]:
        return dict(self._data)

    def get_properties(self) -> dict[str, str]:
        return dict(self._properties)

    def copy(self) -> CatalogColumnStatistics:
        return CatalogColumnStatistics({k: v.copy() for k, v in self._data.items()}, self._properties)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CatalogColumnStatistics) and other._data == self._data

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data)))

    def __repr__(self) -> str:
        return f"CatalogColumnStatistics({self._data!r})"


# ---------------------------------------------------------------------- JSON (catalog stores)
def table_statistics_json(stats: CatalogTableStatistics) -> dict[str, Any]:
    return {
        "row_count": stats.get_row_count(),
        "file_count": stats.get_field_count(),
        "total_size": stats.get_total_size(),
        "raw_data_size": stats.get_raw_data_size(),
        "properties": stats.get_properties(),
    }


def table_statistics_from_json(d: dict[str, Any]) -> CatalogTableStatistics:
    return CatalogTableStatistics(
        d.get("row_count"), d.get("file_count"), d.get("total_size"), d.get("raw_data_size"), d.get("properties")
    )


def _data_json(data: CatalogColumnStatisticsDataBase) -> dict[str, Any]:
    d = asdict(data)  # type: ignore[call-overload]
    for key in ("min", "max"):
        if isinstance(getattr(data, key, None), Date):
            d[key] = d[key]["days_since_epoch"]
    return {"kind": data.kind, **d}


def _data_from_json(d: dict[str, Any]) -> CatalogColumnStatisticsDataBase:
    cls = _KINDS[d["kind"]]
    values: dict[str, Any] = {f.name: d.get(f.name) for f in fields(cls)}  # type: ignore[arg-type]
    values["properties"] = dict(values.get("properties") or {})
    if cls is CatalogColumnStatisticsDataDate:
        for key in ("min", "max"):
            if values[key] is not None:
                values[key] = Date(int(values[key]))
    return cls(**values)


def column_statistics_json(stats: CatalogColumnStatistics) -> dict[str, Any]:
    return {
        "columns": {name: _data_json(data) for name, data in stats.get_column_statistics_data().items()},
        "properties": stats.get_properties(),
    }


def column_statistics_from_json(d: dict[str, Any]) -> CatalogColumnStatistics:
    return CatalogColumnStatistics(
        {name: _data_from_json(data) for name, data in (d.get("columns") or {}).items()}, d.get("properties")
    )
