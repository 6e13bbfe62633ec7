"""Python data → tables: `from_elements`, `from_pandas` and `from_arrow`.

The data becomes a pyarrow Table registered with the in-process 'memory' connector
(runtime/connectors/memory.py) and a hidden temporary table over it, so a Table made from
Python data is scanned, planned and run like any other table.
"""

from __future__ import annotations

import itertools
from typing import Any

import pyarrow as pa

from runtime import types as t_
from runtime.map_values import has_map, pairs_form
from runtime.row import arrow_value
from runtime.types import DataType, Field, arrow_schema
from streamsql.descriptors import Schema, TableDescriptor
from streamsql.row import Row

HIDDEN_PREFIX = "__memory$"
_names = itertools.count(1)


def datatype_of_arrow(at: pa.DataType) -> DataType:
    """Flink's type for an Arrow type (the inverse of DataType.to_arrow, widened)."""
    if pa.types.is_boolean(at):
        return t_.BOOLEAN()
    if pa.types.is_int8(at):
        return t_.TINYINT()
    if pa.types.is_int16(at):
        return t_.SMALLINT()
    if pa.types.is_int32(at):
        return t_.INT()
    if pa.types.is_integer(at):
        return t_.BIGINT()
    if pa.types.is_float32(at):
        return t_.FLOAT()
    if pa.types.is_floating(at):
        return t_.DOUBLE()
    if pa.types.is_decimal(at):
        return t_.DECIMAL(at.precision, at.scale)
    if pa.types.is_string(at) or pa.types.is_large_string(at) or pa.types.is_null(at):
        return t_.STRING()
    if pa.types.is_binary(at) or pa.types.is_large_binary(at):
        return t_.BYTES()
    if pa.types.is_date(at):
        return t_.DATE()
    if pa.types.is_time(at):
        return t_.TIME(0 if at.unit == "s" else 3)
    if pa.types.is_timestamp(at):
        precision = {"s": 0, "ms": 3, "us": 6, "ns": 9}[at.unit]
        return t_.TIMESTAMP_LTZ(precision) if at.tz else t_.TIMESTAMP(precision)
    if pa.types.is_duration(at):
        return t_.INTERVAL_DAY_TIME()
    if pa.types.is_list(at) or pa.types.is_large_list(at):
        return t_.ARRAY(datatype_of_arrow(at.value_type))
    if pa.types.is_map(at):
        return t_.MAP(datatype_of_arrow(at.key_type), datatype_of_arrow(at.item_type))
    if pa.types.is_struct(at):
        return t_.ROW([(at.field(i).name, datatype_of_arrow(at.field(i).type)) for i in range(at.num_fields)])
    if pa.types.is_dictionary(at):
        return datatype_of_arrow(at.value_type)
    raise TypeError(f"no Flink type for the Arrow type {at}")


def _schema_fields(schema: Any, data: pa.Table) -> tuple[list[Field], Schema | None]:
    """The physical fields for `data` given PyFlink's schema forms: None (inferred), a list
    of names, a list of DataTypes (from_pandas: the data's names), a ROW DataType, or a
    Schema (may add computed columns and a watermark)."""
    if schema is None:
        return [Field(n, datatype_of_arrow(f.type)) for n, f in zip(data.column_names, data.schema, strict=True)], None
    if isinstance(schema, Schema):
        return schema.physical_fields(), schema
    if isinstance(schema, DataType):
        if schema.name != "ROW":
            raise TypeError("a from_elements schema DataType must be DataTypes.ROW([...])")
        return [Field(n, ft) for n, ft in zip(schema.field_names, schema.children, strict=True)], None
    if isinstance(schema, (list, tuple)) and all(isinstance(s, str) for s in schema):
        if len(schema) != data.num_columns:
            raise ValueError(f"{len(schema)} names for {data.num_columns} columns")
        return [Field(n, datatype_of_arrow(f.type)) for n, f in zip(schema, data.schema, strict=True)], None
    if isinstance(schema, (list, tuple)) and schema and all(isinstance(s, DataType) for s in schema):
        # from_pandas(pdf, [DataTypes.DOUBLE(), ...]): the DataFrame's column names, these types
        if len(schema) != data.num_columns:
            raise ValueError(f"{len(schema)} types for {data.num_columns} columns")
        return [Field(n, t) for n, t in zip(data.column_names, schema, strict=True)], None
    raise TypeError(
        f"unsupported schema {schema!r}: use a list of names, a list of DataTypes, DataTypes.ROW([...]) or a Schema"
    )


def elements_to_arrow(elements: list[Any], schema: Any) -> pa.Table:
    """Rows of Python values (tuples, Rows, dicts or scalars) as an Arrow table, typed by
    `schema` when it gives types (else Arrow's inference)."""
    rows = list(elements)
    names: list[str] | None = None
    types: list[pa.DataType] | None = None
    dtypes: list[DataType] = []
    if isinstance(schema, DataType) and schema.name == "ROW":
        names = list(schema.field_names)
        dtypes = list(schema.children)
    elif isinstance(schema, Schema):
        names = [f.name for f in schema.physical_fields()]
        dtypes = [f.type for f in schema.physical_fields()]
    if dtypes:
        types = [t.to_arrow() for t in dtypes]
    elif isinstance(schema, (list, tuple)):
        names = list(schema)
    if rows and isinstance(rows[0], dict):
        names = names or list(rows[0].keys())
        tuples = [tuple(r.get(n) for n in names) for r in rows]
    else:
        tuples = [tuple(r) if isinstance(r, (tuple, list, Row)) else (r,) for r in rows]
    width = len(names) if names is not None else (len(tuples[0]) if tuples else 0)
    if names is None:
        names = [f"_{i + 1}" for i in range(width)]  # PyFlink's default names
    columns = [[r[i] for r in tuples] for i in range(width)]
    for i, t in enumerate(dtypes):
        if t.name == "ROW" or any(isinstance(v, Row) for v in columns[i][:1]):
            columns[i] = [arrow_value(v) for v in columns[i]]  # nested Rows as tuples
        if has_map(t):  # dicts → the MAP layout's (key, value) pairs (runtime/map_values.py)
            columns[i] = [pairs_form(v, t) for v in columns[i]]
    arrays = [pa.array(c, type=types[i] if types else None) for i, c in enumerate(columns)]
    return pa.Table.from_arrays(arrays, names=names)


def register_arrow(env: Any, data: pa.Table, schema: Any = None) -> str:
    """Register `data` as a hidden temporary table of `env`; returns its name."""
    from runtime.connectors.memory import register_table

    fields, schema_obj = _schema_fields(schema, data)
    if isinstance(schema, Schema):
        by_name = set(data.column_names) >= {f.name for f in fields}
        cols = [data.column(f.name) if by_name else data.column(i) for i, f in enumerate(fields)]
    else:
        cols = list(data.columns)
    target = arrow_schema(fields)
    typed = pa.Table.from_arrays(cols, names=[f.name for f in fields]).cast(
        pa.schema([pa.field(f.name, f.type) for f in target])
    )
    table_id = register_table(typed)
    schema_obj = (
        schema_obj or Schema.new_builder().from_fields([f.name for f in fields], [f.type for f in fields]).build()
    )
    name = f"{HIDDEN_PREFIX}{next(_names)}"
    descriptor = TableDescriptor.for_connector("memory").schema(schema_obj).option("table-id", table_id).build()
    env.execute_sql(descriptor.to_ddl(name, temporary=True))
    return name


def to_arrow_table(data: Any) -> pa.Table:
    """A pyarrow Table from a Table, RecordBatch, RecordBatchReader or list of batches."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    if isinstance(data, list) and data and all(isinstance(b, pa.RecordBatch) for b in data):
        return pa.Table.from_batches(data)
    raise TypeError(f"from_arrow takes a pyarrow Table, RecordBatch or RecordBatchReader, not {type(data).__name__}")
