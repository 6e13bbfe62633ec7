"""Parsed statements: what `planner.parse.parse_script` returns and the rest consumes.

Query bodies and expressions stay sqlglot expressions (flink dialect); the binder resolves
them. Every statement keeps its own text and where it starts in the script, so errors
point at the right line and column.
"""

from __future__ import annotations

from dataclasses import field

from sqlglot import exp

from runtime.frozen import frozen_dataclass
from runtime.types import DataType


@frozen_dataclass
class Statement:
    """A statement of a script. Every kind keeps its own text and where it starts, so an
    error found later (by the binder, the planner or a connector) points at its line.

    Every class of this module has a docstring: a dataclass without one gets a generated
    `__doc__` from `inspect.signature`, which costs start-up time for nothing."""

    # The statement's text (no trailing ';'), and its 1-based start line/column in the script.
    sql: str = field(default="", kw_only=True)
    line: int = field(default=1, kw_only=True)
    column: int = field(default=1, kw_only=True)


@frozen_dataclass
class ColumnDef:
    """One column of CREATE TABLE: physical, computed (`AS expr`) or metadata (`METADATA`)."""

    name: str
    kind: str  # "physical" | "computed" | "metadata"
    type: DataType | None = None  # None for computed columns (inferred by the binder)
    expr: exp.Expression | None = None  # computed columns
    metadata_key: str | None = None  # METADATA FROM 'key' (None: the column name)
    virtual: bool = False
    comment: str | None = None


@frozen_dataclass
class WatermarkDef:
    """`WATERMARK FOR column AS expr`: the binder checks the expression and the column's type."""

    column: str
    expr: exp.Expression


@frozen_dataclass
class LikeClause:
    """`LIKE source (INCLUDING ALL ...)`: merged with the source table by the catalog, as Flink merges."""

    source: tuple[str, ...]
    # e.g. (("INCLUDING", "ALL"), ("EXCLUDING", "OPTIONS"), ("OVERWRITING", "WATERMARKS"))
    options: tuple[tuple[str, str], ...] = ()


@frozen_dataclass
class Distribution:
    """`DISTRIBUTED BY [HASH | RANGE] (keys) [INTO n BUCKETS]` / `DISTRIBUTED INTO n BUCKETS`
    (Flink's TableDistribution). Catalog metadata for the connector: streamsql's connectors
    write no buckets, so a distributed table can be read but not written (Flink's error for a
    sink without SupportsBucketing)."""

    kind: str = "UNKNOWN"  # HASH | RANGE | UNKNOWN (the connector picks the algorithm)
    keys: tuple[str, ...] = ()
    buckets: int | None = None

    def sql(self) -> str:
        """The clause as Flink prints it (TableDistribution's serializable string)."""
        if not self.keys and self.buckets:
            return f"DISTRIBUTED INTO {self.buckets} BUCKETS"
        kind = "" if self.kind == "UNKNOWN" else self.kind
        keys = ", ".join("`" + k.replace("`", "``") + "`" for k in self.keys)
        return f"DISTRIBUTED BY {kind}({keys})" + (f" INTO {self.buckets} BUCKETS" if self.buckets else "")


@frozen_dataclass
class CreateTable(Statement):
    """CREATE [TEMPORARY] TABLE, with CREATE TABLE AS / REPLACE TABLE AS when `as_query` is set."""

    name: tuple[str, ...]  # identifier path, e.g. ("orders",) or ("cat", "db", "orders")
    columns: tuple[ColumnDef, ...]
    watermark: WatermarkDef | None = None
    primary_key: tuple[str, ...] | None = None
    options: dict[str, str] = field(default_factory=dict, hash=False)
    like: LikeClause | None = None
    temporary: bool = False
    if_not_exists: bool = False
    comment: str | None = None
    partitioned_by: tuple[str, ...] = ()
    constraint_name: str | None = None  # CONSTRAINT name PRIMARY KEY (...)
    # CREATE [OR REPLACE] TABLE ... AS query (CTAS / RTAS)
    as_query: exp.Expression | None = None
    or_replace: bool = False
    # REPLACE TABLE ... AS query (without CREATE OR): the table must exist.
    replace_only: bool = False
    distribution: Distribution | None = None


@frozen_dataclass
class CreateView(Statement):
    """CREATE [TEMPORARY] VIEW: the query stays text-like (sqlglot) until a query reads the view."""

    name: tuple[str, ...]
    query: exp.Expression
    column_names: tuple[str, ...] | None = None
    temporary: bool = False
    if_not_exists: bool = False
    comment: str | None = None


@frozen_dataclass
class Drop(Statement):
    """DROP TABLE / DROP VIEW (other kinds of DROP have their own statements)."""

    kind: str  # "TABLE" | "VIEW"
    name: tuple[str, ...]
    if_exists: bool = False
    temporary: bool = False


@frozen_dataclass
class SetOption(Statement):
    """`SET 'key' = 'value'` (a session option), or `SET;` listing the options set."""

    key: str | None = None  # None: `SET;` lists the options
    value: str | None = None


@frozen_dataclass
class ResetOption(Statement):
    """`RESET 'key'` (back to its default), or `RESET;` for all of them."""

    key: str | None = None  # None: reset all


@frozen_dataclass
class Query(Statement):
    """A query run for its rows: SELECT, VALUES, set operations, WITH ... ."""

    query: exp.Expression  # exp.Select / exp.Union / exp.Values / ... (flink dialect)


@frozen_dataclass
class InsertInto(Statement):
    """INSERT INTO / INSERT OVERWRITE a table (its own job, or one of a statement set's)."""

    table: tuple[str, ...]
    query: exp.Expression
    columns: tuple[str, ...] | None = None
    overwrite: bool = False
    # INSERT ... PARTITION (k = 'v', ...): static partition values
    partition: tuple[tuple[str, exp.Expression], ...] = ()
    # Dynamic options of the sink table for this INSERT only (a materialized table's
    # `ALTER MATERIALIZED TABLE ... RESUME WITH (...)`), over the table's own options.
    sink_options: dict[str, str] = field(default_factory=dict, hash=False)


@frozen_dataclass
class StatementSet(Statement):
    """`EXECUTE STATEMENT SET BEGIN ... END`: its INSERTs planned and run as one job."""

    inserts: tuple[InsertInto, ...]


@frozen_dataclass
class Show(Statement):
    """SHOW <what>: the listing statements, with their scope and LIKE filters."""

    what: str  # "TABLES" | "VIEWS" | "FUNCTIONS" | "CATALOGS" | "DATABASES" | "JOBS" | ...
    # SHOW ... FROM|IN scope: a catalog (DATABASES), [catalog.]database (TABLES, VIEWS,
    # FUNCTIONS) or a table (COLUMNS).
    scope: tuple[str, ...] | None = None
    like: str | None = None  # [NOT] [I]LIKE 'pattern'
    not_like: bool = False
    ilike: bool = False
    # SHOW PARTITIONS t PARTITION (k = 'v', ...): the partial partition spec to list.
    partition: tuple[tuple[str, str], ...] = ()


@frozen_dataclass
class Describe(Statement):
    """DESCRIBE / DESC [EXTENDED] a table or view."""

    name: tuple[str, ...]
    extended: bool = False


@frozen_dataclass
class Explain(Statement):
    """EXPLAIN [details] of a query, an INSERT or a statement set."""

    statement: Query | InsertInto | StatementSet
    details: tuple[str, ...] = ()  # e.g. ("CHANGELOG_MODE",), ("ESTIMATED_COST",)
