"""`pyflink.table.catalog`'s names: a catalog seen from Python, and the values it holds.

`TableEnvironment.get_catalog(name)` returns a `Catalog` bound to the environment: each of
its methods is the SQL statement of the same meaning on that catalog (`list_databases()`
is `SHOW DATABASES FROM c`, `create_database(...)` is `CREATE DATABASE c.d ...`), so Python
and SQL see one catalog layer (catalogs, databases, tables, views, functions, resolved as
Flink resolves them). Catalog values (`CatalogDatabase`, `CatalogBaseTable`,
`CatalogFunction`, `ObjectPath`, `ResolvedSchema`, ...) are plain Python objects.
`HiveCatalog` is a Java class: use `CREATE CATALOG` with streamsql's catalog types
(docs/catalogs.md); `JdbcCatalog(...)` describes a `jdbc` catalog (PostgreSQL) to register. Table and column statistics (ANALYZE TABLE's, or set with
`alter_*_statistics`) are kept by every catalog, per table and per partition. Partitions
themselves, models and procedures are not: those methods raise `CatalogException` saying so
(a filesystem table's partitions are its directories: SHOW PARTITIONS lists them).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any

from planner.catalog import query_text
from planner.expanded_sql import expanded_query
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.types import ROW, DataType, Field
from streamsql.catalog_statistics import (
    CatalogColumnStatistics,
    CatalogTableStatistics,
    column_statistics_from_json,
    column_statistics_json,
    table_statistics_from_json,
    table_statistics_json,
)
from streamsql.expressions import quote
from streamsql.unsupported import JAVA, jvm_only_class

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment

__all__ = [
    "Catalog",
    "CatalogBaseTable",
    "CatalogColumnStatistics",
    "CatalogDatabase",
    "CatalogDescriptor",
    "CatalogException",
    "CatalogFunction",
    "CatalogPartition",
    "CatalogPartitionSpec",
    "CatalogTableStatistics",
    "Column",
    "ComputedColumn",
    "Constraint",
    "HiveCatalog",
    "JdbcCatalog",
    "MetadataColumn",
    "ObjectIdentifier",
    "ObjectPath",
    "PhysicalColumn",
    "Procedure",
    "ResolvedSchema",
    "UniqueConstraint",
    "WatermarkSpec",
]


class CatalogException(Exception):  # noqa: N818 - PyFlink's name
    """A catalog operation failed or is not supported by streamsql's catalogs."""


def _sql_string(v: Any) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def _with(options: dict[str, str]) -> str:
    return (
        ""
        if not options
        else " WITH (" + ", ".join(f"{_sql_string(k)} = {_sql_string(v)}" for k, v in options.items()) + ")"
    )


# ---------------------------------------------------------------------- names
class ObjectPath:
    """`database.object` inside a catalog."""

    def __init__(self, database_name: str | None = None, object_name: str | None = None, j_object_path: Any = None):
        if not database_name or not object_name:
            raise ValueError("ObjectPath needs a database name and an object name")
        self._database, self._object = database_name, object_name

    @staticmethod
    def from_string(full_name: str) -> ObjectPath:
        parts = full_name.split(".")
        if len(parts) != 2:
            raise ValueError(f"Cannot get split '{full_name}' to get database name and object name")
        return ObjectPath(parts[0], parts[1])

    def get_database_name(self) -> str:
        return self._database

    def get_object_name(self) -> str:
        return self._object

    def get_full_name(self) -> str:
        return f"{self._database}.{self._object}"

    def compare_to(self, other: ObjectPath) -> int:
        a, b = self.get_full_name(), other.get_full_name()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectPath) and other.get_full_name() == self.get_full_name()

    def __hash__(self) -> int:
        return hash(self.get_full_name())

    def __str__(self) -> str:
        return self.get_full_name()


class ObjectIdentifier:
    """A fully qualified name: catalog, database, object."""

    def __init__(self, j_object_identifier: tuple[str, str, str]) -> None:
        self._parts = tuple(j_object_identifier)

    @staticmethod
    def of(catalog_name: str, database_name: str, object_name: str) -> ObjectIdentifier:
        return ObjectIdentifier((catalog_name, database_name, object_name))

    def get_catalog_name(self) -> str:
        return self._parts[0]

    def get_database_name(self) -> str:
        return self._parts[1]

    def get_object_name(self) -> str:
        return self._parts[2]

    def to_object_path(self) -> ObjectPath:
        return ObjectPath(self._parts[1], self._parts[2])

    def to_list(self) -> list[str]:
        return list(self._parts)

    def as_serializable_string(self) -> str:
        return ".".join(quote(p) for p in self._parts)

    def as_summary_string(self) -> str:
        return ".".join(self._parts)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectIdentifier) and other._parts == self._parts

    def __hash__(self) -> int:
        return hash(self._parts)

    def __str__(self) -> str:
        return self.as_serializable_string()


class CatalogDescriptor:
    """A catalog to create: its name and options (`'type'` among them)."""

    def __init__(self, j_catalog_descriptor: tuple[str, dict[str, str], str | None]) -> None:
        self._name, self._options, self._comment = j_catalog_descriptor

    @staticmethod
    def of(catalog_name: str, configuration: Any, comment: str | None = None) -> CatalogDescriptor:
        options = configuration.to_dict() if hasattr(configuration, "to_dict") else dict(configuration)
        return CatalogDescriptor((catalog_name, options, comment))

    def get_catalog_name(self) -> str:
        return self._name

    def get_options(self) -> dict[str, str]:
        return dict(self._options)

    def get_comment(self) -> str | None:
        return self._comment


# ---------------------------------------------------------------------- values
class _Described:
    _comment: str | None

    def get_comment(self) -> str:
        return self._comment or ""

    def get_description(self) -> str | None:
        return self._comment

    def get_detailed_description(self) -> str | None:
        return self._comment


class CatalogDatabase(_Described):
    """A database's properties and comment."""

    def __init__(self, j_catalog_database: tuple[dict[str, str], str | None]) -> None:
        self._properties, self._comment = dict(j_catalog_database[0]), j_catalog_database[1]

    @staticmethod
    def create_instance(properties: dict[str, str], comment: str | None = None) -> CatalogDatabase:
        return CatalogDatabase((properties, comment))

    def get_properties(self) -> dict[str, str]:
        return dict(self._properties)

    def copy(self) -> CatalogDatabase:
        return CatalogDatabase((self._properties, self._comment))


# Creating, altering or dropping a partition: the catalogs keep no partition metadata.
_PARTITION_METADATA = (
    "Partition metadata (create / alter / drop a partition: a partition exists once rows are written into it, "
    "INSERT INTO t PARTITION (k = 'v') ...; list them with list_partitions or SHOW PARTITIONS)"
)


class CatalogPartition(_Described):
    """A partition's properties (streamsql's catalogs keep no partition metadata: the
    partitions are the ones the connector stores, SHOW PARTITIONS)."""

    def __init__(self, j_catalog_partition: tuple[dict[str, str], str | None]) -> None:
        self._properties, self._comment = dict(j_catalog_partition[0]), j_catalog_partition[1]

    @staticmethod
    def create_instance(properties: dict[str, str], comment: str | None = None) -> CatalogPartition:
        return CatalogPartition((properties, comment))

    def get_properties(self) -> dict[str, str]:
        return dict(self._properties)

    def copy(self) -> CatalogPartition:
        return CatalogPartition((self._properties, self._comment))


class CatalogBaseTable(_Described):
    """A table (schema, partition keys, options, comment) or a view (its query)."""

    def __init__(self, j_catalog_base_table: dict[str, Any]) -> None:
        self._d = dict(j_catalog_base_table)
        self._comment = self._d.get("comment")

    @staticmethod
    def create_table(
        schema: Any,
        partition_keys: list[str] | None = None,
        properties: dict[str, str] | None = None,
        comment: str | None = None,
    ) -> CatalogBaseTable:
        return CatalogBaseTable(
            {
                "kind": "TABLE",
                "schema": schema,
                "partition_keys": list(partition_keys or []),
                "options": dict(properties or {}),
                "comment": comment,
            }
        )

    @staticmethod
    def create_view(
        original_query: str, expanded_query: str, schema: Any, properties: dict[str, str], comment: str | None = None
    ) -> CatalogBaseTable:
        return CatalogBaseTable(
            {
                "kind": "VIEW",
                "query": original_query,
                "expanded": expanded_query,
                "schema": schema,
                "options": dict(properties or {}),
                "comment": comment,
            }
        )

    def get_options(self) -> dict[str, str]:
        return dict(self._d.get("options") or {})

    def get_unresolved_schema(self) -> Any:
        return self._d.get("schema")

    def get_partition_keys(self) -> list[str]:
        return list(self._d.get("partition_keys") or [])

    def get_table_kind(self) -> str:
        return str(self._d["kind"])

    def copy(self) -> CatalogBaseTable:
        return CatalogBaseTable(self._d)


class CatalogFunction:
    """A catalog function: its class (for Python: `module.name`) and language."""

    def __init__(self, j_catalog_function: tuple[str, str]) -> None:
        self._class_name, self._language = j_catalog_function

    @staticmethod
    def create_instance(class_name: str, function_language: str = "Python") -> CatalogFunction:
        return CatalogFunction((class_name, function_language.upper()))

    def get_class_name(self) -> str:
        return self._class_name

    def get_function_language(self) -> str:
        return self._language

    def get_options(self) -> dict[str, str]:
        return {}

    def get_description(self) -> str:
        return f"{self._language} function {self._class_name}"

    def get_detailed_description(self) -> str:
        return self.get_description()

    def copy(self) -> CatalogFunction:
        return CatalogFunction((self._class_name, self._language))


class CatalogPartitionSpec:
    def __init__(self, partition_spec: dict[str, str]) -> None:
        self._spec = dict(partition_spec)

    def get_partition_spec(self) -> dict[str, str]:
        return dict(self._spec)


# ---------------------------------------------------------------------- resolved schema
@frozen_dataclass
class Column:
    """A resolved column: physical, computed (an expression) or metadata."""

    name: str
    data_type: DataType
    comment: str | None = None
    expression: str | None = None
    metadata_key: str | None = None
    virtual: bool = False

    @staticmethod
    def physical(name: str, data_type: DataType) -> Column:
        return PhysicalColumn(name, data_type)

    @staticmethod
    def computed(name: str, resolved_expression: Any) -> Column:
        return ComputedColumn(name, getattr(resolved_expression, "type", None), expression=str(resolved_expression))  # type: ignore[arg-type]

    @staticmethod
    def metadata(name: str, data_type: DataType, metadata_key: str | None, is_virtual: bool) -> Column:
        return MetadataColumn(name, data_type, metadata_key=metadata_key, virtual=is_virtual)

    def get_name(self) -> str:
        return self.name

    def get_data_type(self) -> DataType:
        return self.data_type

    def get_comment(self) -> str | None:
        return self.comment

    def with_comment(self, comment: str) -> Column:
        return type(self)(self.name, self.data_type, comment, self.expression, self.metadata_key, self.virtual)

    def rename(self, new_name: str) -> Column:
        return type(self)(new_name, self.data_type, self.comment, self.expression, self.metadata_key, self.virtual)

    def copy(self, new_type: DataType | None = None, new_data_type: DataType | None = None) -> Column:
        """This column with another type (PyFlink names the argument new_type on Column and
        new_data_type on its subclasses; both are accepted)."""
        t = new_type if new_type is not None else new_data_type
        return type(self)(
            self.name, t or self.data_type, self.comment, self.expression, self.metadata_key, self.virtual
        )

    def is_physical(self) -> bool:
        return self.expression is None and self.metadata_key is None and not isinstance(self, MetadataColumn)

    def is_persisted(self) -> bool:
        return self.is_physical() or (isinstance(self, MetadataColumn) and not self.virtual)

    def explain_extras(self) -> str | None:
        if self.expression is not None:
            return f"AS {self.expression}"
        if isinstance(self, MetadataColumn):
            key = f" FROM '{self.metadata_key}'" if self.metadata_key else ""
            return f"METADATA{key}{' VIRTUAL' if self.virtual else ''}"
        return None

    def as_summary_string(self) -> str:
        extras = self.explain_extras()
        return f"`{self.name}` {self.data_type}" + (f" {extras}" if extras else "")


class PhysicalColumn(Column):
    pass


class ComputedColumn(Column):
    def get_expression(self) -> str | None:
        return self.expression


class MetadataColumn(Column):
    def get_metadata_key(self) -> str | None:
        return self.metadata_key

    def is_virtual(self) -> bool:
        return self.virtual


@frozen_dataclass
class WatermarkSpec:
    rowtime_attribute: str
    watermark_expression: str

    @staticmethod
    def of(rowtime_attribute: str, watermark_expression: Any) -> WatermarkSpec:
        return WatermarkSpec(rowtime_attribute, str(watermark_expression))

    def get_rowtime_attribute(self) -> str:
        return self.rowtime_attribute

    def get_watermark_expression(self) -> str:
        return self.watermark_expression

    def as_summary_string(self) -> str:
        return f"WATERMARK FOR `{self.rowtime_attribute}`: {self.watermark_expression}"


class Constraint:
    """A table constraint; streamsql knows primary keys (`UniqueConstraint`)."""

    def __init__(self, j_constraint: tuple[str, str, bool]) -> None:
        self._name, self._type, self._enforced = j_constraint

    def get_name(self) -> str:
        return self._name

    def get_type(self) -> str:
        return self._type

    def is_enforced(self) -> bool:
        return self._enforced

    def as_summary_string(self) -> str:
        return f"CONSTRAINT `{self._name}` {self._type}"


class UniqueConstraint(Constraint):
    def __init__(self, j_unique_constraint: tuple[str, list[str]] | None = None) -> None:
        name, columns = j_unique_constraint or ("PK", [])
        super().__init__((name, "PRIMARY_KEY", False))
        self._columns = list(columns)

    @staticmethod
    def primary_key(name: str, columns: list[str]) -> UniqueConstraint:
        return UniqueConstraint((name, columns))

    def get_columns(self) -> list[str]:
        return list(self._columns)

    def get_type_string(self) -> str:
        return "PRIMARY KEY"

    def as_summary_string(self) -> str:
        cols = ", ".join(f"`{c}`" for c in self._columns)
        return f"CONSTRAINT `{self._name}` PRIMARY KEY ({cols}) NOT ENFORCED"


class ResolvedSchema:
    """Columns, watermarks and primary key of a table, resolved."""

    def __init__(
        self,
        columns: list[Column] | None = None,
        watermark_specs: list[WatermarkSpec] | None = None,
        primary_key: UniqueConstraint | None = None,
        j_resolved_schema: Any = None,
    ) -> None:
        self._columns = list(columns or [])
        self._watermarks = list(watermark_specs or [])
        self._pk = primary_key

    @staticmethod
    def of(columns: list[Column]) -> ResolvedSchema:
        return ResolvedSchema(columns)

    @staticmethod
    def physical(column_names: list[str], column_data_types: list[DataType]) -> ResolvedSchema:
        return ResolvedSchema([Column.physical(n, t) for n, t in zip(column_names, column_data_types, strict=True)])

    def get_column_count(self) -> int:
        return len(self._columns)

    def get_columns(self) -> list[Column]:
        return list(self._columns)

    def get_column_names(self) -> list[str]:
        return [c.name for c in self._columns]

    def get_column_data_types(self) -> list[DataType]:
        return [c.data_type for c in self._columns]

    def get_column(self, column_index_or_name: int | str) -> Column | None:
        if isinstance(column_index_or_name, int):
            return self._columns[column_index_or_name] if 0 <= column_index_or_name < len(self._columns) else None
        return next((c for c in self._columns if c.name == column_index_or_name), None)

    def get_watermark_specs(self) -> list[WatermarkSpec]:
        return list(self._watermarks)

    def get_primary_key(self) -> UniqueConstraint | None:
        return self._pk

    def get_primary_key_indexes(self) -> list[int]:
        names = self.get_column_names()
        return [names.index(c) for c in self._pk.get_columns()] if self._pk else []

    def _row(self, columns: list[Column]) -> DataType:
        return ROW([(c.name, c.data_type) for c in columns])

    def to_physical_row_data_type(self) -> DataType:
        return self._row([c for c in self._columns if c.is_physical()])

    def to_source_row_data_type(self) -> DataType:
        return self._row(self._columns)

    def to_sink_row_data_type(self) -> DataType:
        return self._row([c for c in self._columns if c.is_persisted()])

    def __str__(self) -> str:
        lines = [c.as_summary_string() for c in self._columns] + [w.as_summary_string() for w in self._watermarks]
        if self._pk:
            lines.append(self._pk.as_summary_string())
        return "(\n  " + ",\n  ".join(lines) + "\n)"


class Procedure:
    """A stored procedure (CALL); streamsql's catalogs have none."""

    def __init__(self, j_procedure: Any = None) -> None:
        raise CatalogException("streamsql's catalogs have no procedures")


# ---------------------------------------------------------------------- the catalog
@mutable_dataclass
class Catalog:
    """A catalog of a TableEnvironment, by name: its methods are SQL on that catalog."""

    _env: TableEnvironment
    _name: str
    _descriptor: CatalogDescriptor | None = field(default=None, repr=False)

    def __init__(self, j_catalog: Any, name: str | None = None) -> None:
        self._env = j_catalog
        self._name = name or j_catalog.get_current_catalog()
        self._descriptor = None

    # names
    def _c(self) -> str:
        return quote(self._name)

    def _db(self, database: str) -> str:
        return f"{self._c()}.{quote(database)}"

    def _obj(self, path: ObjectPath) -> str:
        return f"{self._db(path.get_database_name())}.{quote(path.get_object_name())}"

    def _rows(self, sql: str) -> list[Any]:
        return list(self._env.execute_sql(sql).collect())

    def _names(self, sql: str) -> list[str]:
        return [str(r[0]) for r in self._rows(sql)]

    def _run(self, sql: str) -> None:
        self._env.execute_sql(sql)

    # databases
    def get_default_database(self) -> str:
        return str(self._store().default_database)

    def list_databases(self) -> list[str]:
        return self._names(f"SHOW DATABASES FROM {self._c()}")

    def database_exists(self, database_name: str) -> bool:
        return database_name in self.list_databases()

    def _store(self) -> Any:
        return self._env.catalog.catalog(self._name)

    def get_database(self, database_name: str) -> CatalogDatabase:
        info = self._store().get_database(database_name)
        if info is None:
            raise CatalogException(f"Database {database_name} does not exist in Catalog {self._name}.")
        return CatalogDatabase((dict(info.properties), info.comment))

    def create_database(self, name: str, database: CatalogDatabase, ignore_if_exists: bool) -> None:
        ine = " IF NOT EXISTS" if ignore_if_exists else ""
        comment = f" COMMENT {_sql_string(database.get_comment())}" if database.get_comment() else ""
        self._run(f"CREATE DATABASE{ine} {self._db(name)}{comment}{_with(database.get_properties())}")

    def drop_database(self, name: str, ignore_if_exists: bool, cascade: bool = False) -> None:
        ie = " IF EXISTS" if ignore_if_exists else ""
        self._run(f"DROP DATABASE{ie} {self._db(name)}{' CASCADE' if cascade else ''}")

    def alter_database(self, name: str, new_database: CatalogDatabase, ignore_if_not_exists: bool) -> None:
        if ignore_if_not_exists and not self.database_exists(name):
            return
        props = new_database.get_properties()
        if props:
            self._run(
                f"ALTER DATABASE {self._db(name)} SET ({', '.join(f'{_sql_string(k)} = {_sql_string(v)}' for k, v in props.items())})"
            )

    # tables and views
    def list_tables(self, database_name: str) -> list[str]:
        return self._names(f"SHOW TABLES FROM {self._db(database_name)}")

    def list_views(self, database_name: str) -> list[str]:
        return self._names(f"SHOW VIEWS FROM {self._db(database_name)}")

    def list_materialized_tables(self, database_name: str) -> list[str]:
        return self._names(f"SHOW MATERIALIZED TABLES FROM {self._db(database_name)}")

    def table_exists(self, table_path: ObjectPath) -> bool:
        db = table_path.get_database_name()
        return self.database_exists(db) and table_path.get_object_name() in self.list_tables(db)

    def get_table(self, table_path: ObjectPath) -> CatalogBaseTable:
        if not self.table_exists(table_path):
            raise CatalogException(f"Table (or view) {table_path} does not exist in Catalog {self._name}.")
        # The stored definition, as Flink's catalog returns it: a table's options, comment,
        # partition keys and primary key; a view's query (a copy made with `create_table`
        # keeps them; a table without its options could not be read).
        obj = self._env.catalog.get_path((self._name, table_path.get_database_name(), table_path.get_object_name()))
        columns: list[Field] = list(self._env.from_path(self._obj(table_path)).get_schema())
        if obj is not None and obj.kind == "VIEW":
            schema = ResolvedSchema.physical([c.name for c in columns], [c.type for c in columns])
            expanded = expanded_query(obj.query, self._env.catalog)
            return CatalogBaseTable.create_view(query_text(obj.query), expanded, schema, {}, obj.comment)
        pk = obj.primary_key if obj is not None else None
        schema = ResolvedSchema(
            [Column.physical(c.name, c.type) for c in columns],
            primary_key=UniqueConstraint.primary_key(obj.constraint_name or "PK_" + "_".join(pk), list(pk))
            if pk
            else None,
        )
        if obj is None:
            return CatalogBaseTable.create_table(schema)
        return CatalogBaseTable.create_table(schema, list(obj.partitioned_by), dict(obj.options), obj.comment)

    def create_table(self, table_path: ObjectPath, table: CatalogBaseTable, ignore_if_exists: bool) -> None:
        from streamsql.descriptors import Schema

        schema = table.get_unresolved_schema()
        ine = "IF NOT EXISTS " if ignore_if_exists else ""
        if table.get_table_kind() == "VIEW":
            self._run(f"CREATE VIEW {ine}{self._obj(table_path)} AS {table._d['query']}")
            return
        if isinstance(schema, Schema):
            parts = schema.ddl_parts()
        else:
            parts = [f"{quote(c.name)} {c.data_type}" for c in schema.get_columns()]
            if schema.get_primary_key() is not None:
                keys = ", ".join(quote(k) for k in schema.get_primary_key().get_columns())
                parts.append(f"PRIMARY KEY ({keys}) NOT ENFORCED")
        text = f"CREATE TABLE {ine}{self._obj(table_path)} (\n  " + ",\n  ".join(parts) + "\n)"
        if table.get_comment():
            text += f" COMMENT {_sql_string(table.get_comment())}"
        if table.get_partition_keys():
            text += f" PARTITIONED BY ({', '.join(quote(k) for k in table.get_partition_keys())})"
        self._run(text + _with(table.get_options()))

    def drop_table(self, table_path: ObjectPath, ignore_if_not_exists: bool) -> None:
        is_view = table_path.get_object_name() in self.list_views(table_path.get_database_name())
        ie = " IF EXISTS" if ignore_if_not_exists else ""
        self._run(f"DROP {'VIEW' if is_view else 'TABLE'}{ie} {self._obj(table_path)}")

    def rename_table(self, table_path: ObjectPath, new_table_name: str, ignore_if_not_exists: bool) -> None:
        if ignore_if_not_exists and not self.table_exists(table_path):
            return
        is_view = table_path.get_object_name() in self.list_views(table_path.get_database_name())
        new_path = ObjectPath(table_path.get_database_name(), new_table_name)
        kind = "VIEW" if is_view else "TABLE"
        self._run(f"ALTER {kind} {self._obj(table_path)} RENAME TO {self._obj(new_path)}")

    def alter_table(self, table_path: ObjectPath, new_table: CatalogBaseTable, ignore_if_not_exists: bool) -> None:
        """Replaces the table's or view's definition with `new_table` (Flink's
        GenericInMemoryCatalog.alterTable: schema, options, comment, partition keys; a view's
        query), which must be of the same kind."""
        if not self.table_exists(table_path):
            if ignore_if_not_exists:
                return
            raise CatalogException(f"Table (or view) {table_path} does not exist in Catalog {self._name}.")
        existing = (
            "VIEW" if table_path.get_object_name() in self.list_views(table_path.get_database_name()) else "TABLE"
        )
        kind = new_table.get_table_kind()
        if existing != kind:
            raise CatalogException(
                f"Table types don't match. Existing table is '{existing}' and new table is '{kind}'."
            )
        if kind == "VIEW":
            self._run(f"ALTER VIEW {self._obj(table_path)} AS {new_table._d['query']}")
            return
        self._run(f"DROP TABLE {self._obj(table_path)}")
        self.create_table(table_path, new_table, False)

    # functions
    def list_functions(self, database_name: str) -> list[str]:
        return self._names(f"SHOW USER FUNCTIONS FROM {self._db(database_name)}")

    def function_exists(self, function_path: ObjectPath) -> bool:
        names = {n.lower() for n in self.list_functions(function_path.get_database_name())}
        return function_path.get_object_name().lower() in names

    def get_function(self, function_path: ObjectPath) -> CatalogFunction:
        found = self._store().get_function(function_path.get_database_name(), function_path.get_object_name())
        if found is None:
            raise CatalogException(f"Function {function_path} does not exist in Catalog {self._name}.")
        identifier, language = found
        return CatalogFunction((identifier, language))

    def create_function(self, function_path: ObjectPath, function: CatalogFunction, ignore_if_exists: bool) -> None:
        ine = " IF NOT EXISTS" if ignore_if_exists else ""
        self._run(
            f"CREATE FUNCTION{ine} {self._obj(function_path)} AS {_sql_string(function.get_class_name())} "
            f"LANGUAGE {function.get_function_language()}"
        )

    def alter_function(
        self, function_path: ObjectPath, new_function: CatalogFunction, ignore_if_not_exists: bool
    ) -> None:
        if ignore_if_not_exists and not self.function_exists(function_path):
            return
        self._run(
            f"ALTER FUNCTION {self._obj(function_path)} AS {_sql_string(new_function.get_class_name())} "
            f"LANGUAGE {new_function.get_function_language()}"
        )

    def drop_function(self, function_path: ObjectPath, ignore_if_not_exists: bool) -> None:
        ie = " IF EXISTS" if ignore_if_not_exists else ""
        self._run(f"DROP FUNCTION{ie} {self._obj(function_path)}")

    # what streamsql's catalogs do not keep
    def _none(self, what: str) -> Any:
        raise CatalogException(f"{what} are not kept by streamsql's catalogs")

    def list_partitions(
        self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec | None = None
    ) -> list[CatalogPartitionSpec]:
        """The partitions the table's connector stores (SHOW PARTITIONS: the filesystem's
        `k=v/` directories), those within `partition_spec` if given."""
        where = ""
        if partition_spec is not None and partition_spec.get_partition_spec():
            pairs = ", ".join(f"{quote(k)} = {_sql_string(v)}" for k, v in partition_spec.get_partition_spec().items())
            where = f" PARTITION ({pairs})"
        specs = []
        for text in self._names(f"SHOW PARTITIONS {self._obj(table_path)}{where}"):
            specs.append(CatalogPartitionSpec(dict(part.split("=", 1) for part in text.split("/") if part)))
        return specs

    def partition_exists(self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec) -> bool:
        wanted = partition_spec.get_partition_spec()
        return any(p.get_partition_spec() == wanted for p in self.list_partitions(table_path))

    def get_partition(self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec) -> CatalogPartition:
        """A stored partition (its properties are empty: catalogs keep no partition metadata)."""
        if not self.partition_exists(table_path, partition_spec):
            raise CatalogException(
                f"Partition {partition_spec.get_partition_spec()} of table {table_path} in catalog {self._name} "
                "does not exist."
            )
        return CatalogPartition.create_instance({}, None)

    def create_partition(
        self, table_path: ObjectPath, partition_spec: Any, partition: Any, ignore_if_exists: bool
    ) -> None:
        self._none(_PARTITION_METADATA)

    def drop_partition(self, table_path: ObjectPath, partition_spec: Any, ignore_if_not_exists: bool) -> None:
        self._none(_PARTITION_METADATA)

    def alter_partition(
        self, table_path: ObjectPath, partition_spec: Any, new_partition: Any, ignore_if_not_exists: bool
    ) -> None:
        self._none(_PARTITION_METADATA)

    # statistics (ANALYZE TABLE's results; Flink's in-memory catalog's rules)
    def _table_entry(self, table_path: ObjectPath, ignore_if_not_exists: bool = False) -> Any:
        from planner.catalog_objects import CatalogTable as Table

        store = self._store()
        db, name = table_path.get_database_name(), table_path.get_object_name()
        obj = store.get(db, name) if store.get_database(db) is not None else None
        if obj is None:
            if ignore_if_not_exists:
                return None
            raise CatalogException(f"Table (or view) {table_path} does not exist in Catalog {self._name}.")
        return obj if isinstance(obj, Table) else None

    def _partition_key(self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec) -> str:
        from streamsql.analyze_table import partition_path

        table = self._table_entry(table_path)
        if table is None or not table.partitioned_by:
            raise CatalogException(f"Table {table_path} in catalog {self._name} is not partitioned.")
        spec = partition_spec.get_partition_spec()
        if set(spec) != set(table.partitioned_by):
            raise CatalogException(
                f"Partition spec {spec} does not name the partition keys {list(table.partitioned_by)} of table "
                f"{table_path} in catalog {self._name}."
            )
        return str(partition_path(spec, table.partitioned_by))

    def _get_stats(self, table_path: ObjectPath, partition: str, kind: str) -> dict[str, Any] | None:
        return self._store().get_statistics(
            table_path.get_database_name(), table_path.get_object_name(), partition, kind
        )

    def _put_stats(self, table_path: ObjectPath, partition: str, kind: str, value: dict[str, Any]) -> None:
        self._store().put_statistics(
            table_path.get_database_name(), table_path.get_object_name(), partition, kind, value
        )

    def get_table_statistics(self, table_path: ObjectPath) -> CatalogTableStatistics:
        """The table's statistics; all -1 (unknown) when none were computed, and for a
        partitioned table (its statistics are per partition)."""
        table = self._table_entry(table_path)
        found = self._get_stats(table_path, "", "table")
        if table is None or table.partitioned_by or found is None:
            return CatalogTableStatistics.unknown()
        return table_statistics_from_json(found)

    def get_table_column_statistics(self, table_path: ObjectPath) -> CatalogColumnStatistics:
        self._table_entry(table_path)
        found = self._get_stats(table_path, "", "columns")
        return column_statistics_from_json(found) if found else CatalogColumnStatistics()

    def get_partition_statistics(
        self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec
    ) -> CatalogTableStatistics:
        found = self._get_stats(table_path, self._partition_key(table_path, partition_spec), "table")
        return table_statistics_from_json(found) if found else CatalogTableStatistics.unknown()

    def bulk_get_partition_statistics(
        self, table_path: ObjectPath, partition_specs: list[CatalogPartitionSpec]
    ) -> list[CatalogTableStatistics]:
        return [self.get_partition_statistics(table_path, spec) for spec in partition_specs]

    def get_partition_column_statistics(
        self, table_path: ObjectPath, partition_spec: CatalogPartitionSpec
    ) -> CatalogColumnStatistics:
        found = self._get_stats(table_path, self._partition_key(table_path, partition_spec), "columns")
        return column_statistics_from_json(found) if found else CatalogColumnStatistics()

    def bulk_get_partition_column_statistics(
        self, table_path: ObjectPath, partition_specs: list[CatalogPartitionSpec]
    ) -> list[CatalogColumnStatistics]:
        return [self.get_partition_column_statistics(table_path, spec) for spec in partition_specs]

    def alter_table_statistics(
        self, table_path: ObjectPath, table_statistics: CatalogTableStatistics, ignore_if_not_exists: bool
    ) -> None:
        table = self._table_entry(table_path, ignore_if_not_exists)
        if table is not None and not table.partitioned_by:
            self._put_stats(table_path, "", "table", table_statistics_json(table_statistics))

    def alter_table_column_statistics(
        self, table_path: ObjectPath, column_statistics: CatalogColumnStatistics, ignore_if_not_exists: bool
    ) -> None:
        if self._table_entry(table_path, ignore_if_not_exists) is not None:
            self._put_stats(table_path, "", "columns", column_statistics_json(column_statistics))

    def alter_partition_statistics(
        self,
        table_path: ObjectPath,
        partition_spec: CatalogPartitionSpec,
        partition_statistics: CatalogTableStatistics,
        ignore_if_not_exists: bool,
    ) -> None:
        if ignore_if_not_exists and self._table_entry(table_path, True) is None:
            return
        key = self._partition_key(table_path, partition_spec)
        self._put_stats(table_path, key, "table", table_statistics_json(partition_statistics))

    def alter_partition_column_statistics(
        self,
        table_path: ObjectPath,
        partition_spec: CatalogPartitionSpec,
        column_statistics: CatalogColumnStatistics,
        ignore_if_not_exists: bool,
    ) -> None:
        if ignore_if_not_exists and self._table_entry(table_path, True) is None:
            return
        key = self._partition_key(table_path, partition_spec)
        self._put_stats(table_path, key, "columns", column_statistics_json(column_statistics))

    # models (CREATE MODEL; a CatalogModel is a Java object in PyFlink: create and alter
    # models with SQL)
    def list_models(self, database_name: str) -> list[str]:
        """The catalog's models (temporary models belong to the session, not the catalog)."""
        if not self.database_exists(database_name):
            raise CatalogException(f"Database {database_name} does not exist in Catalog {self._name}.")
        return list(self._store().list_models(database_name))

    def get_model(self, model_path: ObjectPath) -> Any:
        raise CatalogException(
            "CatalogModel is a Java object in PyFlink: read a model with DESCRIBE MODEL / SHOW CREATE MODEL"
        )

    def model_exists(self, model_path: ObjectPath) -> bool:
        db = model_path.get_database_name()
        return self.database_exists(db) and model_path.get_object_name() in self.list_models(db)

    def create_model(self, model_path: ObjectPath, model: Any, ignore_if_exists: bool) -> None:
        raise CatalogException("CatalogModel is a Java object in PyFlink: create a model with CREATE MODEL")

    def alter_model(self, model_path: ObjectPath, new_model: Any, ignore_if_not_exists: bool) -> None:
        raise CatalogException("CatalogModel is a Java object in PyFlink: change a model with ALTER MODEL")

    def drop_model(self, model_path: ObjectPath, ignore_if_not_exists: bool) -> None:
        ie = " IF EXISTS" if ignore_if_not_exists else ""
        self._run(f"DROP MODEL{ie} {self._obj(model_path)}")

    def rename_model(self, model_path: ObjectPath, new_model_name: str, ignore_if_not_exists: bool) -> None:
        ie = " IF EXISTS" if ignore_if_not_exists else ""
        new_path = ObjectPath(model_path.get_database_name(), new_model_name)
        self._run(f"ALTER MODEL{ie} {self._obj(model_path)} RENAME TO {self._obj(new_path)}")

    def list_procedures(self, database_name: str) -> list[str]:
        return []

    def get_procedure(self, procedure_path: ObjectPath) -> Any:
        return self._none("Procedures")


HiveCatalog = jvm_only_class(
    "HiveCatalog", JAVA + " (the Hive metastore client); use CREATE CATALOG with a streamsql catalog type"
)


class JdbcCatalog:
    """PyFlink 1.x's `JdbcCatalog(catalog_name, default_database, username, pwd, base_url)`:
    the `jdbc` catalog type (Flink's JDBC catalog for PostgreSQL, planner/catalog_jdbc.py).
    `t_env.register_catalog(name, JdbcCatalog(...))` runs its CREATE CATALOG (connecting to
    the server then, as Flink opens a catalog when it is registered); the registered catalog
    is read through `t_env.get_catalog(name)`."""

    def __init__(
        self,
        catalog_name: str,
        default_database: str,
        username: str,
        pwd: str,
        base_url: str,
        compatible_mode: str | None = None,
    ) -> None:
        options = {
            "type": "jdbc",
            "default-database": default_database,
            "username": username,
            "password": pwd,
            "base-url": base_url,
        }
        if compatible_mode:
            options["compatible-mode"] = compatible_mode
        self._descriptor = CatalogDescriptor((catalog_name, options, None))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(
            f"JdbcCatalog.{name}: register the catalog first (t_env.register_catalog(name, catalog)) and call "
            f"{name} on t_env.get_catalog(name)"
        )
