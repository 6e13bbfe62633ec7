"""`pyflink.table.types`'s names: `DataTypes`, `UserDefinedType`, `Row`, `RowKind`.

`DataTypes` is PyFlink's factory with PyFlink's method names, parameter names and defaults;
it returns streamsql's own `runtime.types.DataType` values, which the planner and runtime
use everywhere, so a type built here is the type the SQL text of the same name gives.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from runtime import types as t_
from runtime.types import DataType
from streamsql.row import Row, RowKind
from streamsql.unsupported import jvm_only_class

__all__ = ["DataType", "DataTypes", "Row", "RowField", "RowKind", "UserDefinedType"]


class RowField(NamedTuple):
    """A field of a ROW type: `DataTypes.FIELD(name, data_type, description)`."""

    name: str
    data_type: DataType
    description: str | None = None


class Resolution(NamedTuple):
    """An interval's unit with its precision: `DataTypes.DAY(2)`, `DataTypes.SECOND(3)`."""

    unit: str
    precision: int | None = None


_DAY_TIME = ("DAY", "HOUR", "MINUTE", "SECOND")
_YEAR_MONTH = ("YEAR", "MONTH")


class DataTypes:
    """PyFlink's `DataTypes` factory (every method, PyFlink's parameter names and defaults)."""

    @staticmethod
    def NULL() -> DataType:  # noqa: N802 - PyFlink's spelling
        return t_.NULL()

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.CHAR(length, nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.VARCHAR(length, nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.STRING(nullable)

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.BOOLEAN(nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType("BINARY", nullable, precision=length)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType("VARBINARY", nullable, precision=length)

    @staticmethod
    def BYTES(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.BYTES(nullable)

    @staticmethod
    def DECIMAL(precision: int, scale: int, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.DECIMAL(precision, scale, nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.TINYINT(nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.SMALLINT(nullable)

    @staticmethod
    def INT(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.INT(nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.BIGINT(nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.FLOAT(nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.DOUBLE(nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:  # noqa: N802
        return t_.DATE(nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.TIME(precision, nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.TIMESTAMP(precision, nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.TIMESTAMP_LTZ(precision, nullable)

    @staticmethod
    def TIMESTAMP_WITH_LOCAL_TIME_ZONE(precision: int = 6, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.TIMESTAMP_LTZ(precision, nullable)

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.ARRAY(element_type, nullable)

    @staticmethod
    def LIST_VIEW(element_type: DataType) -> DataType:  # noqa: N802
        """The accumulator type of a `ListView` (stored as an ARRAY)."""
        return t_.ARRAY(element_type)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> DataType:  # noqa: N802
        return t_.MAP(key_type, value_type, nullable)

    @staticmethod
    def MAP_VIEW(key_type: DataType, value_type: DataType) -> DataType:  # noqa: N802
        """The accumulator type of a `MapView` (stored as a MAP)."""
        return t_.MAP(key_type, value_type)

    @staticmethod
    def MULTISET(element_type: DataType, nullable: bool = True) -> DataType:  # noqa: N802
        return DataType("MULTISET", nullable, children=(element_type,))

    @staticmethod
    def ROW(row_fields: list[Any] | None = None, nullable: bool = True) -> DataType:  # noqa: N802
        fields = [(f[0], f[1]) for f in (row_fields or [])]
        descriptions = tuple(f[2] if len(f) > 2 else None for f in (row_fields or []))
        return t_.ROW(fields, nullable, descriptions)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str | None = None) -> RowField:  # noqa: N802
        return RowField(name, data_type, description)

    @staticmethod
    def SECOND(precision: int = 6) -> Resolution:  # noqa: N802
        return Resolution("SECOND", precision)

    @staticmethod
    def MINUTE() -> Resolution:  # noqa: N802
        return Resolution("MINUTE")

    @staticmethod
    def HOUR() -> Resolution:  # noqa: N802
        return Resolution("HOUR")

    @staticmethod
    def DAY(precision: int = 2) -> Resolution:  # noqa: N802
        return Resolution("DAY", precision)

    @staticmethod
    def MONTH() -> Resolution:  # noqa: N802
        return Resolution("MONTH")

    @staticmethod
    def YEAR(precision: int = 2) -> Resolution:  # noqa: N802
        return Resolution("YEAR", precision)

    @staticmethod
    def INTERVAL(upper_resolution: Resolution, lower_resolution: Resolution | None = None) -> DataType:  # noqa: N802
        """INTERVAL types: a year-month interval (YEAR, MONTH) or a day-time one (DAY ...
        SECOND); streamsql keeps one representation of each family, as Flink's runtime does
        (months as INT, milliseconds as BIGINT)."""
        units = {upper_resolution.unit} | ({lower_resolution.unit} if lower_resolution else set())
        if units <= set(_YEAR_MONTH):
            return t_.INTERVAL_YEAR_MONTH()
        if units <= set(_DAY_TIME):
            return t_.INTERVAL_DAY_TIME()
        raise ValueError(f"an INTERVAL cannot mix year-month and day-time units: {sorted(units)}")


UserDefinedType = jvm_only_class(
    "UserDefinedType",
    "it maps a Python class to a Java class (a JVM); use a ROW type (DataTypes.ROW) for structured values",
)
