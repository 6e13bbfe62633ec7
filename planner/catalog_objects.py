"""The objects a catalog holds (Flink's CatalogBaseTable): resolved tables and views, and
their paths. The binder reads these; `planner.catalog` (the catalog manager) creates them
from DDL, which it binds. Keeping them here lets both depend on them without depending on
each other's module.
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import TYPE_CHECKING

from sqlglot import exp

from planner.logical import TableInfo
from runtime.connectors.base import METADATA_COLUMNS, PRIMARY_KEY, TableDescription
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.types import DataType, Field, plain

if TYPE_CHECKING:
    from planner.statements import ColumnDef, CreateTable, Distribution, WatermarkDef
    from planner.statements_materialized import Freshness


DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"
Path = tuple[str, str, str]


def full_path(name: tuple[str, ...] | list[str] | str) -> Path:
    """`t` → (default_catalog, default_database, t), ignoring the current namespace (use
    `Catalog.qualify` to resolve as a statement does)."""
    parts = (name,) if isinstance(name, str) else tuple(name)
    if len(parts) == 1:
        return (DEFAULT_CATALOG, DEFAULT_DATABASE, parts[0])
    if len(parts) == 2:
        return (DEFAULT_CATALOG, parts[0], parts[1])
    return (parts[-3], parts[-2], parts[-1])


@frozen_dataclass
class ResolvedColumn:
    """A table's column with its type resolved (and a computed column's expression bound)."""

    name: str
    type: DataType
    kind: str  # physical | computed | metadata
    definition: ColumnDef
    # Computed columns: the expression bound over the physical columns.
    expr: Expr | None = None


@frozen_dataclass
class MaterializedDefinition:
    """What makes a table a materialized table (Flink's CatalogMaterializedTable): the
    definition query (its table names fully qualified), the freshness, the refresh mode."""

    query: exp.Expression
    freshness: Freshness
    refresh_mode: str  # CONTINUOUS | FULL
    # The schema was stated or changed beyond the query's columns (computed or virtual
    # metadata columns, a watermark, comments, ALTER ... ADD / MODIFY / DROP): SHOW CREATE
    # prints every column then, so a persistent catalog keeps them.
    explicit_schema: bool = False


@frozen_dataclass
class CatalogTable:
    """A table of the catalog, resolved from its CREATE TABLE: what a scan or a sink of it needs."""

    path: Path
    columns: tuple[ResolvedColumn, ...]
    options: dict[str, str] = field(hash=False, compare=False)
    watermark: WatermarkDef | None = None
    # The watermark expression bound over the full row (all columns), and the rowtime column.
    watermark_expr: Expr | None = None
    rowtime_index: int | None = None
    primary_key: tuple[str, ...] | None = None
    temporary: bool = False
    comment: str | None = None
    partitioned_by: tuple[str, ...] = ()
    distribution: Distribution | None = None  # DISTRIBUTED BY / INTO (metadata; see Distribution)
    statement: CreateTable | None = field(default=None, hash=False, compare=False)
    constraint_name: str | None = None
    # A materialized table's definition (its query, freshness and refresh mode); None for
    # a plain table.
    materialized: MaterializedDefinition | None = field(default=None, hash=False, compare=False)

    @property
    def kind(self) -> str:
        return "MATERIALIZED TABLE" if self.materialized is not None else "TABLE"

    @property
    def fields(self) -> tuple[Field, ...]:
        """All columns in declared order (what a query over the table sees)."""
        return tuple(Field(c.name, c.type) for c in self.columns)

    @property
    def physical_fields(self) -> tuple[Field, ...]:
        return tuple(Field(c.name, plain(c.type)) for c in self.columns if c.kind == "physical")

    @property
    def persisted_fields(self) -> tuple[Field, ...]:
        """Columns an INSERT writes: physical (and non-virtual metadata) columns."""
        return tuple(
            Field(c.name, plain(c.type))
            for c in self.columns
            if c.kind == "physical" or (c.kind == "metadata" and not c.definition.virtual)
        )

    @property
    def scan_fields(self) -> tuple[Field, ...]:
        """What the connector's source produces: physical and metadata columns, in declared
        order (computed columns are evaluated over these, by position)."""
        return tuple(Field(c.name, plain(c.type)) for c in self.columns if c.kind in ("physical", "metadata"))

    def metadata_keys(self, sink: bool = False) -> dict[str, str]:
        """{column: metadata key} of the metadata columns read (`sink`: written, i.e. not
        VIRTUAL); a column without `FROM 'key'` reads the key of its own name."""
        return {
            c.name: c.definition.metadata_key or c.name
            for c in self.columns
            if c.kind == "metadata" and not (sink and c.definition.virtual)
        }

    def description(self, sink: bool = False) -> TableDescription:
        """The runtime's view of this table for the connector's planning-time checks."""
        return TableDescription(
            ".".join(self.path),
            self.options,
            self.persisted_fields if sink else self.scan_fields,
            tuple(self.primary_key or ()),
            self.metadata_keys(sink),
            sink,
        )

    @property
    def connector(self) -> str:
        return self.options.get("connector", "")

    def table_info(self, sink: bool = False) -> TableInfo:
        options = dict(self.options)
        metadata = self.metadata_keys(sink)
        if metadata:  # the connector finds its metadata columns (runtime/connectors/base.py)
            options[METADATA_COLUMNS] = json.dumps(metadata, sort_keys=True)
        if self.primary_key:  # e.g. upsert-kafka reads the record key into these columns
            options[PRIMARY_KEY] = ",".join(self.primary_key)
        return TableInfo(
            self.path,
            self.connector,
            tuple(sorted(options.items())),
            self.scan_fields,
            tuple(self.primary_key or ()),
            tuple(self.partitioned_by),
        )


@frozen_dataclass
class CatalogView:
    """A view of the catalog: its query (expanded where it is read) and its output columns."""

    path: Path
    query: exp.Expression
    fields: tuple[Field, ...]
    sql: str = ""
    column_names: tuple[str, ...] | None = None
    temporary: bool = False
    comment: str | None = None

    kind = "VIEW"


CatalogObject = CatalogTable | CatalogView


def quoted(path: Path | tuple[str, ...]) -> str:
    """`cat`.`db`.`t`, as Flink's ObjectIdentifier prints itself."""
    return ".".join("`" + p.replace("`", "``") + "`" for p in path)
