"""Schema, TableDescriptor, FormatDescriptor and TableSchema, shaped like PyFlink's.

    TableDescriptor.for_connector('filesystem')
        .schema(Schema.new_builder()
                .column('user', DataTypes.STRING())
                .column('ts', DataTypes.TIMESTAMP(3))
                .watermark('ts', "ts - INTERVAL '5' SECOND")
                .build())
        .option('path', 'clicks.csv')
        .format('csv')
        .build()

A descriptor renders to the CREATE TABLE statement it stands for (`to_ddl`), so
`create_temporary_table` goes through the same parser and catalog checks as SQL DDL.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any

from runtime.frozen import frozen_dataclass
from runtime.types import ROW, DataType, Field
from streamsql.expressions import Expression, RenderCtx, quote, type_sql

__all__ = ["FormatDescriptor", "Schema", "TableDescriptor", "TableSchema"]


def _sql_text(e: Expression | str) -> str:
    return e._render(RenderCtx()) if isinstance(e, Expression) else str(e)


def _string(v: str) -> str:
    return "'" + str(v).replace("'", "''") + "'"


@frozen_dataclass
class Schema:
    """Columns (physical, computed, metadata), watermark and primary key of a table."""

    # (name, kind, DataType | SQL text, extra) with kind physical | computed | metadata
    columns: tuple[tuple[str, str, Any, Any], ...] = ()
    watermark_spec: tuple[str, str] | None = None
    primary_key_columns: tuple[str, ...] = ()

    @staticmethod
    def new_builder() -> Schema.Builder:
        return Schema.Builder()

    def column_names(self) -> list[str]:
        return [c[0] for c in self.columns]

    def physical_fields(self) -> list[Field]:
        return [Field(n, t) for n, kind, t, _ in self.columns if kind == "physical"]

    def ddl_parts(self) -> list[str]:
        """The column, watermark and key clauses of a CREATE TABLE."""
        parts = []
        for name, kind, t, extra in self.columns:
            if kind == "physical":
                parts.append(f"{quote(name)} {type_sql(t) if isinstance(t, DataType) else t}")
            elif kind == "computed":
                parts.append(f"{quote(name)} AS {_sql_text(t)}")
            else:
                key, virtual = extra
                text = f"{quote(name)} {type_sql(t) if isinstance(t, DataType) else t} METADATA"
                if key:
                    text += f" FROM {_string(key)}"
                if virtual:
                    text += " VIRTUAL"
                parts.append(text)
        if self.watermark_spec is not None:
            parts.append(f"WATERMARK FOR {quote(self.watermark_spec[0])} AS {self.watermark_spec[1]}")
        if self.primary_key_columns:
            parts.append(f"PRIMARY KEY ({', '.join(quote(c) for c in self.primary_key_columns)}) NOT ENFORCED")
        return parts

    def __str__(self) -> str:
        return "(\n  " + ",\n  ".join(self.ddl_parts()) + "\n)"

    class Builder:
        def __init__(self) -> None:
            self._schema = Schema()

        def column(self, name: str, data_type: DataType | str) -> Schema.Builder:
            self._schema = replace(self._schema, columns=(*self._schema.columns, (name, "physical", data_type, None)))
            return self

        def column_by_expression(self, name: str, expr: Expression | str) -> Schema.Builder:
            self._schema = replace(self._schema, columns=(*self._schema.columns, (name, "computed", expr, None)))
            return self

        def column_by_metadata(
            self, name: str, data_type: DataType | str, metadata_key: str | None = None, is_virtual: bool = False
        ) -> Schema.Builder:
            col = (name, "metadata", data_type, (metadata_key, is_virtual))
            self._schema = replace(self._schema, columns=(*self._schema.columns, col))
            return self

        def from_fields(self, names: list[str], types: list[DataType]) -> Schema.Builder:
            for n, t in zip(names, types, strict=True):
                self.column(n, t)
            return self

        def from_schema(self, schema: Schema) -> Schema.Builder:
            self._schema = schema
            return self

        def watermark(self, column_name: str, watermark_expr: Expression | str) -> Schema.Builder:
            self._schema = replace(self._schema, watermark_spec=(column_name, _sql_text(watermark_expr)))
            return self

        def primary_key(self, *column_names: str) -> Schema.Builder:
            self._schema = replace(self._schema, primary_key_columns=tuple(column_names))
            return self

        def build(self) -> Schema:
            return self._schema


@frozen_dataclass
class FormatDescriptor:
    """A format and its options (`csv` with `field-delimiter` → 'csv.field-delimiter')."""

    format: str
    options: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def for_format(format: str) -> FormatDescriptor.Builder:  # noqa: A002 - PyFlink's parameter name
        return FormatDescriptor.Builder(format)

    def get_format(self) -> str:
        return self.format

    def get_options(self) -> dict[str, str]:
        return dict(self.options)

    class Builder:
        def __init__(self, fmt: str) -> None:
            self._fmt = fmt
            self._options: dict[str, str] = {}

        def option(self, key: str, value: Any) -> FormatDescriptor.Builder:
            self._options[key] = _option_value(value)
            return self

        def build(self) -> FormatDescriptor:
            return FormatDescriptor(self._fmt, dict(self._options))


def _option_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


@frozen_dataclass
class TableDescriptor:
    """Everything a CREATE TABLE says: connector and format options, schema, partitioning."""

    options: dict[str, str]
    schema: Schema | None = None
    partition_keys: tuple[str, ...] = ()
    comment: str | None = None

    @staticmethod
    def for_connector(connector: str) -> TableDescriptor.Builder:
        return TableDescriptor.Builder(connector)

    def get_options(self) -> dict[str, str]:
        return dict(self.options)

    def get_schema(self) -> Schema | None:
        return self.schema

    def get_partition_keys(self) -> list[str]:
        return list(self.partition_keys)

    def get_comment(self) -> str | None:
        return self.comment

    def to_ddl(self, name: str, temporary: bool = True, if_not_exists: bool = False) -> str:
        """The CREATE TABLE statement this descriptor stands for."""
        if self.schema is None or not self.schema.columns:
            raise ValueError("the TableDescriptor needs a schema: .schema(Schema.new_builder()...build())")
        head = f"CREATE {'TEMPORARY ' if temporary else ''}TABLE {'IF NOT EXISTS ' if if_not_exists else ''}"
        text = head + quote(name) + " (\n  " + ",\n  ".join(self.schema.ddl_parts()) + "\n)"
        if self.comment:
            text += f" COMMENT {_string(self.comment)}"
        if self.partition_keys:
            text += f" PARTITIONED BY ({', '.join(quote(k) for k in self.partition_keys)})"
        opts = ",\n  ".join(f"{_string(k)} = {_string(v)}" for k, v in self.options.items())
        return text + f" WITH (\n  {opts}\n)"

    def __str__(self) -> str:
        return self.to_ddl("descriptor")

    class Builder:
        def __init__(self, connector: str) -> None:
            self._options: dict[str, str] = {"connector": connector}
            self._schema: Schema | None = None
            self._partition: tuple[str, ...] = ()
            self._comment: str | None = None

        def schema(self, schema: Schema) -> TableDescriptor.Builder:
            self._schema = schema
            return self

        def option(self, key: str, value: Any) -> TableDescriptor.Builder:
            self._options[key] = _option_value(value)
            return self

        def format(self, fmt: str | FormatDescriptor, format_option: Any = None) -> TableDescriptor.Builder:
            if isinstance(fmt, FormatDescriptor):
                self._options["format"] = fmt.format
                for k, v in fmt.options.items():
                    self._options[f"{fmt.format}.{k}"] = v
            else:
                self._options["format"] = fmt
            return self

        def partitioned_by(self, *keys: str) -> TableDescriptor.Builder:
            self._partition = tuple(keys)
            return self

        def comment(self, comment: str) -> TableDescriptor.Builder:
            self._comment = comment
            return self

        def build(self) -> TableDescriptor:
            return TableDescriptor(dict(self._options), self._schema, self._partition, self._comment)


class TableSchema(tuple):  # noqa: SLOT001 - a tuple of Fields, with PyFlink's TableSchema accessors
    """A table's columns (what `Table.get_schema()` returns): a tuple of `Field`s."""

    def get_field_names(self) -> list[str]:
        return [f.name for f in self]

    def get_field_data_types(self) -> list[DataType]:
        return [f.type for f in self]

    def get_field_count(self) -> int:
        return len(self)

    def get_field_name(self, field_index: int) -> str | None:
        return self[field_index].name if 0 <= field_index < len(self) else None

    def copy(self) -> TableSchema:
        return TableSchema(self)

    def to_row_data_type(self) -> DataType:
        return ROW([(f.name, f.type) for f in self])

    @classmethod
    def builder(cls) -> TableSchemaBuilder:
        return TableSchemaBuilder()

    def get_field_data_type(self, field: int | str) -> DataType | None:
        if isinstance(field, int):
            return self[field].type if 0 <= field < len(self) else None
        for f in self:
            if f.name == field:
                return f.type
        return None

    def __str__(self) -> str:
        """Flink's (legacy) TableSchema text, as PyFlink prints `table.get_schema()`."""
        return "root\n" + "".join(f" |-- {f.name}: {f.type}\n" for f in self)

    def resolved(self) -> ResolvedTableSchema:
        """The same columns printing as Flink's ResolvedSchema (`get_resolved_schema()`)."""
        return ResolvedTableSchema(self)


class ResolvedTableSchema(TableSchema):
    """What `get_resolved_schema()` returns: prints as Flink's ResolvedSchema does (the
    text of `Table.print_schema()`)."""

    def __str__(self) -> str:
        lines = [f"  `{f.name}` {f.type}" for f in self]
        return "(\n" + ",\n".join(lines) + "\n)"


class TableSchemaBuilder:
    """`TableSchema.builder().field('a', DataTypes.INT()).build()` (PyFlink's legacy builder)."""

    def __init__(self) -> None:
        self._fields: list[Field] = []

    def field(self, name: str, data_type: DataType) -> TableSchemaBuilder:
        self._fields.append(Field(name, data_type))
        return self

    def build(self) -> TableSchema:
        return TableSchema(self._fields)
