"""The `jdbc` catalog type: Flink's JdbcCatalog in its PostgreSQL flavour (flink-connector-jdbc's
PostgresCatalog), so a job reads and writes every table of a PostgreSQL server without DDL.

    CREATE CATALOG mypg WITH ('type' = 'jdbc', 'default-database' = 'shop',
      'username' = 'postgres', 'password' = '...', 'base-url' = 'jdbc:postgresql://localhost:5432');

What the catalog shows, as Flink's PostgresCatalog does:

- its databases are the server's databases (not `template0` / `template1`);
- a database's tables are `schema.table` for the base tables of every schema but the system
  ones (`pg_*`, `information_schema`); a name without a schema means schema `public`, so
  `orders`, `` `public.orders` `` and `` mypg.shop.`public.orders` `` are one table;
- a table's columns come from the server's catalog (`pg_attribute`), typed by Flink's
  PostgreSQL type mapping (`flink_type`), NOT NULL where the column is, with the table's
  PRIMARY KEY (named as in PostgreSQL); its options are the `jdbc` connector's (`url` with
  the database, `table-name` = `schema.table`, the credentials), so scans, lookups and
  upserting INSERTs go through that connector (runtime/connectors/jdbc.py);
- the catalog holds nothing itself: CREATE / ALTER / DROP of tables, databases, functions
  and models, and statistics, fail as Flink's UnsupportedOperationException does (a
  TableException "Could not execute CreateTable in path ..."), with a hint. TEMPORARY
  tables and views may still be created in it (the session holds those).

The table definition is built as DDL text and resolved by the catalog manager's loader, as the
`sqlite` catalog's stored DDL is: an unchanged table is resolved once (cached by its DDL),
a table changed in PostgreSQL is seen at the next statement. Metadata queries go through one
psycopg connection per database (the jdbc connector's `connect`), opened when first needed.

This module loads when a CREATE CATALOG names the type (planner/catalog_store.py,
`LAZY_CATALOG_TYPES`), never at start-up.
"""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from planner.catalog import serializable_type
from planner.catalog_objects import quoted
from planner.catalog_store import (
    CatalogError,
    CatalogFactory,
    CatalogStore,
    DatabaseInfo,
    Loader,
    register_catalog_type,
)
from planner.errors import SqlValidationError
from runtime.config.options import ConfigOption
from runtime.connectors.postgres import Endpoint, connect, parse_jdbc_url
from runtime.errors import ConnectorError
from runtime.types import (
    ARRAY,
    BIGINT,
    BOOLEAN,
    BYTES,
    CHAR,
    DATE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    MAX_VARCHAR,
    SMALLINT,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_LTZ,
    VARCHAR,
    DataType,
)

if TYPE_CHECKING:
    from planner.catalog_objects import CatalogObject

TYPE_NAME = "jdbc"
TABLE_EXCEPTION = "org.apache.flink.table.api.TableException"
VALIDATION_EXCEPTION = "org.apache.flink.table.api.ValidationException"

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "default-database",
        required=True,
        description="The database `USE CATALOG` switches to; the catalog connects to it when it is created.",
    ),
    ConfigOption("username", required=True, description="The PostgreSQL user the catalog and its tables connect as."),
    ConfigOption("password", required=True, description="That user's password."),
    ConfigOption(
        "base-url",
        required=True,
        description="`jdbc:postgresql://host:port` (no database: each database's tables get "
        "`<base-url>/<database>` as their `url`); `?k=v` parameters are kept.",
    ),
    ConfigOption(
        "compatible-mode",
        description="Flink's dialect switch for PostgreSQL-compatible servers; only PostgreSQL itself is spoken "
        "here, so it may be unset or `postgresql`.",
    ),
)

# Flink's PostgresCatalog hides these databases; schemas: `pg_*` and information_schema.
_BUILTIN_DATABASES = frozenset({"template0", "template1"})
_DEFAULT_SCHEMA = "public"
_BASE_URL = re.compile(r"^(?P<server>jdbc:postgresql://[^/?]+)/?(?P<path>[^?]*)(?P<params>\?.*)?$")
_READ_ONLY_HINT = (
    "The jdbc catalog shows the PostgreSQL server's databases and tables; it cannot create, alter or drop "
    "them, nor hold functions, models or statistics (Flink's JdbcCatalog throws "
    "java.lang.UnsupportedOperationException). Change them in PostgreSQL; a TEMPORARY table or view can "
    "still be created in this catalog."
)


def _builtin_schema(schema: str) -> bool:
    return schema.startswith("pg_") or schema == "information_schema"


# ---------------------------------------------------------------------- type mapping
def _varlen(typmod: int) -> int:
    """The declared length of char(n) / varchar(n) (PgJDBC's precision: unbounded when unset)."""
    return MAX_VARCHAR if typmod < 0 else typmod - 4


def _seconds_precision(typmod: int) -> int:
    """Fractional second digits of time / timestamp(tz) (PgJDBC's scale: 6 when unset)."""
    return 6 if typmod < 0 else typmod


def flink_type(typname: str, typmod: int) -> DataType | None:
    """Flink's PostgreSQL type mapping (PostgresTypeMapper) of a column of `pg_type.typname`
    and `pg_attribute.atttypmod` (for arrays the element's modifier); None: not supported.

    numeric without precision is DECIMAL(38, 18), as Flink maps it (SPARK-26538); uuid is
    VARCHAR(36); serial types are their integer types; json, jsonb, interval, money, ... are
    not mapped (Flink fails on them too)."""
    if typname.startswith("_"):
        element = _element_type(typname[1:], typmod)
        return None if element is None else ARRAY(element)
    if typname == "uuid":
        return VARCHAR(36)
    return _element_type(typname, typmod)


def _element_type(typname: str, typmod: int) -> DataType | None:
    simple = {
        "bool": BOOLEAN,
        "bytea": BYTES,
        "int2": SMALLINT,
        "int4": INT,
        "int8": BIGINT,
        "float4": FLOAT,
        "float8": DOUBLE,
        "text": STRING,
        "date": DATE,
    }
    if typname in simple:
        return simple[typname]()
    if typname == "numeric":
        if typmod < 0:
            return DECIMAL(38, 18)
        precision, scale = ((typmod - 4) >> 16) & 0xFFFF, (typmod - 4) & 0xFFFF
        if not 1 <= precision <= 38 or scale > precision:  # beyond Flink's DECIMAL (or a negative scale)
            return None
        return DECIMAL(precision, scale)
    if typname == "bpchar":
        return CHAR(_varlen(typmod))
    if typname == "varchar":
        return VARCHAR(_varlen(typmod))
    if typname == "timestamp":
        return TIMESTAMP(_seconds_precision(typmod))
    if typname == "timestamptz":
        return TIMESTAMP_LTZ(_seconds_precision(typmod))
    if typname == "time":
        return TIME(_seconds_precision(typmod))
    return None


# ---------------------------------------------------------------------- the store
def _open(endpoint: Endpoint, url: str) -> Any:
    """A connection to one database, or Flink's "Failed connecting to <url> via JDBC"."""
    try:
        # One attempt (a refused connection fails at once), generous time for a slow server.
        return connect(endpoint, retry_timeout_s=0, connect_timeout_s=15)
    except ImportError:
        raise SqlValidationError(
            "The jdbc catalog needs psycopg: pip install 'streamsql[postgres]'.", flink_class=VALIDATION_EXCEPTION
        ) from None
    except ConnectorError as e:
        reason = str(e).split(": ", 1)[-1].strip()
        raise SqlValidationError(
            f"Failed connecting to {url} via JDBC: {reason}",
            flink_class=VALIDATION_EXCEPTION,
            hint="Check the catalog's 'base-url', 'username' and 'password', and that the server is running.",
        ) from None


def _string(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class JdbcCatalogStore(CatalogStore):
    """`jdbc`: the databases and tables of a PostgreSQL server (see the module docstring)."""

    type_name = TYPE_NAME

    def __init__(self, name: str, options: dict[str, str], comment: str | None = None) -> None:
        self._lock = threading.RLock()
        self._connections: dict[str, Any] = {}
        self._cache: dict[tuple[str, str], tuple[str, CatalogObject]] = {}
        self.loader: Loader | None = None
        super().__init__(name, options, comment)  # sets `options`: checks them and connects

    # `options` is replaced by ALTER CATALOG SET / RESET: the new server or credentials are
    # checked (Flink re-creates the catalog) and the open connections closed.
    @property
    def options(self) -> dict[str, str]:
        return self._options

    @options.setter
    def options(self, options: dict[str, str]) -> None:
        mode = (options.get("compatible-mode") or "").strip()
        if mode and mode.lower() not in ("postgresql", "postgres"):
            raise SqlValidationError(
                f"Unsupported 'compatible-mode' = '{mode}' for catalog type 'jdbc': streamsql's jdbc catalog speaks "
                "PostgreSQL only (leave the option unset, or 'postgresql')."
            )
        base = (options.get("base-url") or "").strip()
        m = _BASE_URL.match(base)
        if m is None:
            raise SqlValidationError(
                f"Could not find any jdbc factory that can handle url '{base}': streamsql's jdbc catalog speaks "
                "PostgreSQL, 'base-url' = 'jdbc:postgresql://host:port'."
            )
        if m.group("path"):
            raise SqlValidationError(
                f"'base-url' = '{base}' must not name a database ('{m.group('path')}'): give "
                "'jdbc:postgresql://host:port' and the database in 'default-database'."
            )
        database = options.get("default-database") or ""
        server, params = m.group("server"), m.group("params") or ""
        url = f"{server}/{database}{params}"
        # Flink's JdbcCatalog#open: fail early when the server cannot be reached.
        con = _open(parse_jdbc_url(url, options.get("username"), options.get("password")), url)
        with self._lock:
            self.close()
            self._cache.clear()
            self._server, self._params, self._options = server, params, dict(options)
            self.default_database = database
            self._connections[database] = con

    def database_url(self, database: str) -> str:
        """The `url` of the database's tables (Flink's getDatabaseUrl: the base url, the
        database, then the base url's parameters)."""
        return f"{self._server}/{database}{self._params}"

    def _endpoint(self, database: str) -> Endpoint:
        return parse_jdbc_url(self.database_url(database), self._options.get("username"), self._options.get("password"))

    # ------------------------------------------------------------------ connections
    def _connection(self, database: str) -> Any:
        con = self._connections.get(database)
        if con is None or con.closed:
            con = self._connections[database] = _open(self._endpoint(database), self.database_url(database))
        return con

    def _query(self, database: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a metadata query on `database`'s connection (re-opened once if it broke)."""
        import psycopg  # loaded by the first connection

        with self._lock:
            for attempt in (1, 2):
                con = self._connection(database)
                try:
                    return list(con.execute(sql, params).fetchall())
                except psycopg.OperationalError as e:
                    self._drop_connection(database)
                    if attempt == 2:
                        raise CatalogError(
                            f"The following SQL query could not be executed ({self.database_url(database)}): {sql}: "
                            f"{str(e).strip()}"
                        ) from None
                except psycopg.Error as e:
                    raise CatalogError(
                        f"The following SQL query could not be executed ({self.database_url(database)}): {sql}: "
                        f"{str(e).strip()}"
                    ) from None
        raise AssertionError("unreachable")

    def _drop_connection(self, database: str) -> None:
        con = self._connections.pop(database, None)
        if con is not None:
            try:
                con.close()
            except Exception:  # noqa: BLE001 - a broken connection may fail to close; it is gone anyway
                pass

    def close(self) -> None:
        with self._lock:
            for database in list(self._connections):
                self._drop_connection(database)

    # ------------------------------------------------------------------ databases
    def list_databases(self) -> list[str]:
        rows = self._query(self.default_database, "SELECT datname FROM pg_database")
        return sorted(r[0] for r in rows if r[0] not in _BUILTIN_DATABASES)

    def get_database(self, name: str) -> DatabaseInfo | None:
        return DatabaseInfo(name) if name in self.list_databases() else None

    def create_database(self, info: DatabaseInfo) -> None:
        self._unsupported(f"CREATE DATABASE {_ident(info.name)} in catalog {_ident(self.name)}")

    def drop_database(self, name: str) -> None:
        self._unsupported(f"DROP DATABASE {_ident(name)} in catalog {_ident(self.name)}")

    def alter_database(self, info: DatabaseInfo) -> None:
        self._unsupported(f"ALTER DATABASE {_ident(info.name)} in catalog {_ident(self.name)}")

    def _unsupported(self, what: str) -> None:
        raise CatalogError(f"Could not execute {what}", TABLE_EXCEPTION, hint=_READ_ONLY_HINT)

    # ------------------------------------------------------------------ tables
    def list_objects(self, database: str) -> list[tuple[str, str]]:
        rows = self._query(
            database,
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'",
        )
        return sorted((f"{s}.{t}", "TABLE") for s, t in rows if not _builtin_schema(s))

    @staticmethod
    def split_name(name: str) -> tuple[str, str] | None:
        """(schema, table) of a catalog table name (`t` is `public.t`); None for more parts."""
        parts = name.split(".")
        if len(parts) == 1:
            return _DEFAULT_SCHEMA, parts[0]
        if len(parts) == 2 and all(parts):
            return parts[0], parts[1]
        return None

    def get(self, database: str, name: str) -> CatalogObject | None:
        ddl = self.table_ddl(database, name)
        if ddl is None:
            return None
        cached = self._cache.get((database, name))
        if cached is not None and cached[0] == ddl:
            return cached[1]
        assert self.loader is not None, "the catalog manager sets the loader"
        obj = self.loader(ddl, "TABLE", database, name)
        self._cache[(database, name)] = (ddl, obj)
        return obj

    def table_ddl(self, database: str, name: str) -> str | None:
        """The table as CREATE TABLE text (columns typed by Flink's mapping, the primary key,
        the jdbc connector's options), or None when the database has no such base table."""
        split = self.split_name(name)
        if split is None or _builtin_schema(split[0]) or self.get_database(database) is None:
            return None
        schema, table = split
        columns = self._query(
            database,
            "SELECT a.attname, t.typname, a.atttypmod, a.attnotnull FROM pg_attribute a "
            "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE n.nspname = %s AND c.relname = %s AND c.relkind IN ('r', 'p') "
            "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
            (schema, table),
        )
        if not columns:
            return None
        key = self._query(
            database,
            "SELECT con.conname, a.attname FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, pos) "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum "
            "WHERE con.contype = 'p' AND n.nspname = %s AND c.relname = %s ORDER BY k.pos",
            (schema, table),
        )
        lines = []
        for column, typname, typmod, not_null in columns:
            t = flink_type(typname, typmod)
            if t is None:
                raise CatalogError(
                    f"Failed getting table {database}.{schema}.{table}: column '{column}' has the PostgreSQL type "
                    f"'{typname}', which Flink's PostgreSQL type mapping does not support "
                    f"(Doesn't support Postgres type '{typname}' yet).",
                    hint="Read the table through a TEMPORARY table WITH ('connector' = 'jdbc', ...) declaring the "
                    "columns you need (a json or jsonb column as STRING), or a PostgreSQL view that casts the "
                    "column to a mapped type.",
                )
            lines.append(f"  {_ident(column)} {serializable_type(t.with_nullable(not not_null))}")
        if key:
            cols = ", ".join(_ident(r[1]) for r in key)
            lines.append(f"  CONSTRAINT {_ident(key[0][0])} PRIMARY KEY ({cols}) NOT ENFORCED")
        options = {
            "connector": "jdbc",
            "url": self.database_url(database),
            "table-name": f"{schema}.{table}",
            "username": self._options.get("username") or "",
            "password": self._options.get("password") or "",
        }
        with_text = ",\n".join(f"  {_string(k)} = {_string(v)}" for k, v in sorted(options.items()) if v)
        path = quoted((self.name, database, name))
        return f"CREATE TABLE {path} (\n" + ",\n".join(lines) + f"\n) WITH (\n{with_text}\n)\n"

    def put(self, database: str, name: str, obj: CatalogObject, ddl: str) -> None:
        command = "AlterTable" if self.table_ddl(database, name) is not None else "CreateTable"
        self._unsupported(f"{command} in path {quoted((self.name, database, name))}")

    def remove(self, database: str, name: str) -> None:
        self._unsupported(f"DropTable in path {quoted((self.name, database, name))}")

    # ------------------------------------------------------------------ functions, models, statistics
    def list_functions(self, database: str) -> list[str]:
        return []

    def get_function(self, database: str, name: str) -> tuple[str, str] | None:
        return None

    def put_function(self, database: str, name: str, identifier: str, language: str) -> None:
        self._unsupported(f"CREATE CATALOG FUNCTION {quoted((self.name, database, name))}")

    def remove_function(self, database: str, name: str) -> None:
        self._unsupported(f"DROP CATALOG FUNCTION {quoted((self.name, database, name))}")

    def list_models(self, database: str) -> list[str]:
        return []

    def get_model(self, database: str, name: str) -> dict[str, Any] | None:
        return None

    def put_model(self, database: str, name: str, value: dict[str, Any]) -> None:
        self._unsupported(f"CreateModel in path {quoted((self.name, database, name))}")

    def remove_model(self, database: str, name: str) -> None:
        self._unsupported(f"DropModel in path {quoted((self.name, database, name))}")

    def get_statistics(self, database: str, name: str, partition: str, kind: str) -> dict[str, Any] | None:
        return None  # Flink's CatalogTableStatistics.UNKNOWN

    def put_statistics(self, database: str, name: str, partition: str, kind: str, value: dict[str, Any]) -> None:
        self._unsupported(f"AlterTableStatistics in path {quoted((self.name, database, name))}")


register_catalog_type(
    CatalogFactory(
        TYPE_NAME,
        JdbcCatalogStore,
        required=tuple(o.key for o in OPTIONS if o.required),
        optional=tuple(o.key for o in OPTIONS if not o.required),
        description="Flink's JDBC catalog for PostgreSQL: the server's databases and `schema.table` tables, "
        "read and written through the jdbc connector.",
    )
)
