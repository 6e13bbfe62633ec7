"""Flink logical types → Spark SQL types, and Spark's Arrow results → streamsql's layout.

Spark computes TIMESTAMP and TIMESTAMP_LTZ both as `TimestampType` (a UTC instant, the
Spark session zone is fixed to UTC), so a TIMESTAMP(3) value keeps its wall-clock digits
and an LTZ value its instant. Results come back through Arrow and are cast to exactly the
Arrow layout of the node's schema (`DataType.to_arrow()`), so rendering is shared with
the local runner.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.types import DataType, Field


class SparkUnsupportedError(Exception):
    """The job uses something the Spark runner cannot run with Flink's semantics. Raised
    before the job starts (planning time), naming the operator, function or type."""


def spark_type(t: DataType) -> Any:
    """The Spark DataType carrying values of Flink type `t`."""
    from pyspark.sql import types as st

    n = t.name
    simple = {
        "TINYINT": st.ByteType,
        "SMALLINT": st.ShortType,
        "INT": st.IntegerType,
        "BIGINT": st.LongType,
        "FLOAT": st.FloatType,
        "DOUBLE": st.DoubleType,
        "BOOLEAN": st.BooleanType,
        "CHAR": st.StringType,
        "VARCHAR": st.StringType,
        "BINARY": st.BinaryType,
        "VARBINARY": st.BinaryType,
        "DATE": st.DateType,
        "TIMESTAMP": st.TimestampType,
        "TIMESTAMP_LTZ": st.TimestampType,
        "NULL": st.NullType,
    }.get(n)
    if simple is not None:
        return simple()
    if n == "DECIMAL":
        return st.DecimalType(t.precision or 10, t.scale or 0)
    if n == "ARRAY":
        return st.ArrayType(spark_type(t.children[0]), True)
    if n == "MAP":
        return st.MapType(spark_type(t.children[0]), spark_type(t.children[1]), True)
    if n == "ROW":
        return st.StructType(
            [st.StructField(fn, spark_type(ft), True) for fn, ft in zip(t.field_names, t.children, strict=True)]
        )
    raise SparkUnsupportedError(f"type {t} has no Spark counterpart in the Spark runner")


# The type names `spark_type` maps (the others: TIME, INTERVAL values, MULTISET, BITMAP,
# VARIANT, RAW ... have no Spark counterpart that keeps their values).
CARRIED_TYPES = frozenset(
    {"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "BOOLEAN", "CHAR", "VARCHAR", "BINARY", "VARBINARY"}
    | {"DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "NULL", "DECIMAL", "ARRAY", "MAP", "ROW"}
)


def check_type(t: DataType, where: str) -> None:
    """Refuse types Spark cannot carry (every type `spark_type` does not map)."""
    if t.name not in CARRIED_TYPES:
        raise SparkUnsupportedError(f"{where}: type {t} is not supported by the Spark runner")
    for c in t.children:
        check_type(c, where)


def spark_schema(fields: tuple[Field, ...] | list[Field], names: list[str]) -> Any:
    from pyspark.sql import types as st

    return st.StructType([st.StructField(n, spark_type(f.type), True) for n, f in zip(names, fields, strict=True)])


def to_layout(table: pa.Table, fields: tuple[Field, ...]) -> list[pa.Array]:
    """The columns of a Spark result (Arrow) cast to the Arrow layout of `fields`."""
    out = []
    for i, f in enumerate(fields):
        col = table.column(i).combine_chunks() if table.num_rows else pa.array([], type=table.schema.field(i).type)
        out.append(_cast(col, f.type))
    return out


def _cast(col: pa.Array, t: DataType) -> pa.Array:
    target = t.to_arrow()
    if col.type == target:
        return col
    if pa.types.is_timestamp(col.type) and pa.types.is_timestamp(target):
        # Spark hands out UTC instants in microseconds; TIMESTAMP(p) keeps the UTC digits.
        raw = col.cast(pa.int64())
        factor = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": 1}[target.unit]
        if target.unit == "ns":
            raw = pc.multiply(raw, 1000)
        elif factor != 1:
            raw = pc.divide(raw, factor)  # whole units: Spark values have no finer digits here
        return raw.cast(pa.timestamp(target.unit, tz=target.tz))
    if pa.types.is_null(col.type):
        return pa.nulls(len(col), target)
    return col.cast(target, safe=False)
