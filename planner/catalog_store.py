"""Catalogs: the stores that hold databases → tables, views and functions, and the factories
that make them from `CREATE CATALOG c WITH ('type' = '...', ...)`.

Three catalog types ship, each declared once in `CATALOG_TYPES`:

- `generic_in_memory`: Flink's default; everything lives in this process.
- `sqlite`: a persistent catalog in one SQLite file (`'path' = '/some/dir/catalog.db'`).
  Objects are stored as the DDL that SHOW CREATE TABLE / VIEW prints (fully qualified),
  so the file is readable with any SQLite client, and re-created by parsing it. SQLite's
  file locking makes several processes on one machine share the catalog safely; every
  look-up checks `PRAGMA data_version`, so DDL committed by another process is seen at
  its next statement. No metastore service is needed (docs/catalogs.md).
- `jdbc`: Flink's JDBC catalog for PostgreSQL (planner/catalog_jdbc.py): the server's
  databases and tables. Its module registers it when a CREATE CATALOG first names the type
  (`LAZY_CATALOG_TYPES`), so start-up does not load it.

A third-party package adds a catalog type by registering a `CatalogFactory` (or a
zero-argument callable returning one) under the entry point group `streamsql.catalogs`;
it is read when a CREATE CATALOG names a type that is not built in (`_load_plugins`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from planner.errors import SqlValidationError
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.plugins import register_plugins

if TYPE_CHECKING:
    from planner.catalog_objects import CatalogObject

CATALOG_EXCEPTION = "org.apache.flink.table.catalog.exceptions.CatalogException"
VALIDATION_EXCEPTION = "org.apache.flink.table.api.ValidationException"


class CatalogError(SqlValidationError):
    """A catalog refused an operation (Flink's CatalogException and its subclasses)."""

    def __init__(self, message: str, flink_class: str = CATALOG_EXCEPTION, **kw: Any) -> None:
        super().__init__(message, flink_class=flink_class, **kw)


@mutable_dataclass
class DatabaseInfo:
    """A database of a catalog: its name, COMMENT and WITH properties."""

    name: str
    comment: str | None = None
    properties: dict[str, str] = field(default_factory=dict)


# A loader turns a stored DDL text back into an object: (ddl, database, name) -> object.
Loader = Callable[[str, str, str, str], "CatalogObject"]


class CatalogStore:
    """One catalog: databases holding tables/views (`CatalogObject`s) and functions.

    Subclasses keep the objects; the catalog manager resolves names and enforces Flink's
    rules (temporary objects, current namespace) on top."""

    type_name = ""

    def __init__(self, name: str, options: dict[str, str], comment: str | None = None) -> None:
        self.name = name
        self.options = dict(options)
        self.comment = comment
        self.default_database = options.get("default-database") or "default"
        self._stats: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self._models: dict[tuple[str, str], dict[str, Any]] = {}

    # ------------------------------------------------------------------ databases
    def list_databases(self) -> list[str]:
        raise NotImplementedError

    def get_database(self, name: str) -> DatabaseInfo | None:
        raise NotImplementedError

    def create_database(self, info: DatabaseInfo) -> None:
        raise NotImplementedError

    def drop_database(self, name: str) -> None:
        raise NotImplementedError

    def alter_database(self, info: DatabaseInfo) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ objects
    def get(self, database: str, name: str) -> CatalogObject | None:
        raise NotImplementedError

    def list_objects(self, database: str) -> list[tuple[str, str]]:
        """(name, kind) of the tables and views of `database`, kind "TABLE" or "VIEW"."""
        raise NotImplementedError

    def put(self, database: str, name: str, obj: CatalogObject, ddl: str) -> None:
        """Store (or replace) an object; `ddl` is its SHOW CREATE text."""
        raise NotImplementedError

    def remove(self, database: str, name: str) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ functions
    def list_functions(self, database: str) -> list[str]:
        raise NotImplementedError

    def get_function(self, database: str, name: str) -> tuple[str, str] | None:
        """(identifier, language) of a permanent function."""
        raise NotImplementedError

    def put_function(self, database: str, name: str, identifier: str, language: str) -> None:
        raise NotImplementedError

    def remove_function(self, database: str, name: str) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ statistics
    # ANALYZE TABLE's results and Catalog.alter_*_statistics, as JSON values
    # (streamsql.catalog_statistics): `kind` is "table" or "columns", `partition` the
    # partition's `k=v/...` path ("" for the whole table). This default keeps them in
    # the process; a persistent store overrides all four.
    def get_statistics(self, database: str, name: str, partition: str, kind: str) -> dict[str, Any] | None:
        return self._statistics().get((database, name, partition, kind))

    def put_statistics(self, database: str, name: str, partition: str, kind: str, value: dict[str, Any]) -> None:
        self._statistics()[(database, name, partition, kind)] = value

    def drop_statistics(self, database: str, name: str) -> None:
        """Forget an object's statistics (DROP, and the old name of a RENAME)."""
        stats = self._statistics()
        for key in [k for k in stats if k[:2] == (database, name)]:
            del stats[key]

    def move_statistics(self, database: str, name: str, new_database: str, new_name: str) -> None:
        """Statistics follow a renamed table (as Flink's in-memory catalog moves them)."""
        stats = self._statistics()
        for key in [k for k in stats if k[:2] == (database, name)]:
            stats[(new_database, new_name, *key[2:])] = stats.pop(key)

    def _statistics(self) -> dict[tuple[str, str, str, str], dict[str, Any]]:
        return self._stats

    # ------------------------------------------------------------------ models
    # Models (CREATE MODEL) as JSON values (streamsql.models: input / output columns,
    # options, comment), in their own namespace beside tables. This default keeps them in
    # the process; a persistent store overrides all four.
    def list_models(self, database: str) -> list[str]:
        return sorted(n for d, n in self._models if d == database)

    def get_model(self, database: str, name: str) -> dict[str, Any] | None:
        return self._models.get((database, name))

    def put_model(self, database: str, name: str, value: dict[str, Any]) -> None:
        self._models[(database, name)] = value

    def remove_model(self, database: str, name: str) -> None:
        self._models.pop((database, name), None)

    def close(self) -> None:
        """Release the store's resources (DROP CATALOG)."""


class InMemoryCatalogStore(CatalogStore):
    """`generic_in_memory`: dictionaries in this process."""

    type_name = "generic_in_memory"

    def __init__(self, name: str, options: dict[str, str], comment: str | None = None) -> None:
        super().__init__(name, options, comment)
        self._databases: dict[str, DatabaseInfo] = {self.default_database: DatabaseInfo(self.default_database)}
        self._objects: dict[tuple[str, str], CatalogObject] = {}
        self._functions: dict[tuple[str, str], tuple[str, str]] = {}

    def list_databases(self) -> list[str]:
        return sorted(self._databases)

    def get_database(self, name: str) -> DatabaseInfo | None:
        return self._databases.get(name)

    def create_database(self, info: DatabaseInfo) -> None:
        self._databases[info.name] = info

    def drop_database(self, name: str) -> None:
        self._databases.pop(name, None)
        for key in [k for k in self._objects if k[0] == name]:
            del self._objects[key]
        for key in [k for k in self._functions if k[0] == name]:
            del self._functions[key]
        for stat in [k for k in self._statistics() if k[0] == name]:
            del self._statistics()[stat]
        for model in [k for k in self._models if k[0] == name]:
            del self._models[model]

    def alter_database(self, info: DatabaseInfo) -> None:
        self._databases[info.name] = info

    def get(self, database: str, name: str) -> CatalogObject | None:
        return self._objects.get((database, name))

    def list_objects(self, database: str) -> list[tuple[str, str]]:
        return sorted((n, o.kind) for (d, n), o in self._objects.items() if d == database)

    def put(self, database: str, name: str, obj: CatalogObject, ddl: str) -> None:
        self._objects[(database, name)] = obj

    def remove(self, database: str, name: str) -> None:
        self._objects.pop((database, name), None)
        self.drop_statistics(database, name)

    def list_functions(self, database: str) -> list[str]:
        return sorted(n for d, n in self._functions if d == database)

    def get_function(self, database: str, name: str) -> tuple[str, str] | None:
        return self._functions.get((database, name))

    def put_function(self, database: str, name: str, identifier: str, language: str) -> None:
        self._functions[(database, name)] = (identifier, language)

    def remove_function(self, database: str, name: str) -> None:
        self._functions.pop((database, name), None)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS databases (
    name TEXT PRIMARY KEY, comment TEXT, properties TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS objects (
    db TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, ddl TEXT NOT NULL,
    PRIMARY KEY (db, name));
CREATE TABLE IF NOT EXISTS functions (
    db TEXT NOT NULL, name TEXT NOT NULL, identifier TEXT NOT NULL, language TEXT NOT NULL,
    PRIMARY KEY (db, name));
CREATE TABLE IF NOT EXISTS models (
    db TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (db, name));
CREATE TABLE IF NOT EXISTS statistics (
    db TEXT NOT NULL, name TEXT NOT NULL, part TEXT NOT NULL, kind TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (db, name, part, kind));
"""


class SqliteCatalogStore(CatalogStore):
    """`sqlite`: a persistent catalog in one SQLite file (see the module docstring).

    Objects are stored as DDL and rebuilt by `loader` (the catalog manager parses and
    resolves them); rebuilt objects are cached by DDL text, so an unchanged object is
    resolved once per process."""

    type_name = "sqlite"

    def __init__(self, name: str, options: dict[str, str], comment: str | None = None) -> None:
        import sqlite3  # with the first SQLite catalog (start-up: the in-memory catalog needs none)

        super().__init__(name, options, comment)
        self.path = os.path.abspath(os.path.expanduser(options["path"]))
        parent = os.path.dirname(self.path)
        try:
            os.makedirs(parent, exist_ok=True)
            self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False, isolation_level=None)
            self._conn.executescript(_SCHEMA)
            self._conn.execute(
                "INSERT OR IGNORE INTO databases (name, comment, properties) VALUES (?, NULL, '{}')",
                (self.default_database,),
            )
        except (OSError, sqlite3.Error) as e:
            raise CatalogError(f"Could not open the catalog file '{self.path}': {e}") from None
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], tuple[str, CatalogObject]] = {}
        self.loader: Loader | None = None

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self._conn.execute(sql, args).fetchall())

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> None:
        with self._lock:
            self._conn.execute(sql, args)

    def list_databases(self) -> list[str]:
        return sorted(r[0] for r in self._rows("SELECT name FROM databases"))

    def get_database(self, name: str) -> DatabaseInfo | None:
        rows = self._rows("SELECT name, comment, properties FROM databases WHERE name = ?", (name,))
        if not rows:
            return None
        return DatabaseInfo(rows[0][0], rows[0][1], json.loads(rows[0][2] or "{}"))

    def create_database(self, info: DatabaseInfo) -> None:
        self._write(
            "INSERT OR REPLACE INTO databases (name, comment, properties) VALUES (?, ?, ?)",
            (info.name, info.comment, json.dumps(info.properties, sort_keys=True)),
        )

    def drop_database(self, name: str) -> None:
        import sqlite3  # loaded by __init__

        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for table in ("databases", "objects", "functions", "statistics", "models"):
                    col = "name" if table == "databases" else "db"
                    self._conn.execute(f"DELETE FROM {table} WHERE {col} = ?", (name,))  # noqa: S608 - fixed names
                self._conn.execute("COMMIT")
            except sqlite3.Error:
                self._conn.execute("ROLLBACK")
                raise

    def alter_database(self, info: DatabaseInfo) -> None:
        self.create_database(info)

    def get(self, database: str, name: str) -> CatalogObject | None:
        rows = self._rows("SELECT ddl, kind FROM objects WHERE db = ? AND name = ?", (database, name))
        if not rows:
            return None
        ddl, kind = rows[0]
        cached = self._cache.get((database, name))
        if cached is not None and cached[0] == ddl:
            return cached[1]
        assert self.loader is not None, "the catalog manager sets the loader"
        obj = self.loader(ddl, kind, database, name)
        self._cache[(database, name)] = (ddl, obj)
        return obj

    def list_objects(self, database: str) -> list[tuple[str, str]]:
        return sorted((r[0], r[1]) for r in self._rows("SELECT name, kind FROM objects WHERE db = ?", (database,)))

    def put(self, database: str, name: str, obj: CatalogObject, ddl: str) -> None:
        self._write(
            "INSERT OR REPLACE INTO objects (db, name, kind, ddl) VALUES (?, ?, ?, ?)", (database, name, obj.kind, ddl)
        )
        self._cache[(database, name)] = (ddl, obj)

    def remove(self, database: str, name: str) -> None:
        self._write("DELETE FROM objects WHERE db = ? AND name = ?", (database, name))
        self._cache.pop((database, name), None)
        self.drop_statistics(database, name)

    def get_statistics(self, database: str, name: str, partition: str, kind: str) -> dict[str, Any] | None:
        rows = self._rows(
            "SELECT value FROM statistics WHERE db = ? AND name = ? AND part = ? AND kind = ?",
            (database, name, partition, kind),
        )
        return json.loads(rows[0][0]) if rows else None

    def put_statistics(self, database: str, name: str, partition: str, kind: str, value: dict[str, Any]) -> None:
        self._write(
            "INSERT OR REPLACE INTO statistics (db, name, part, kind, value) VALUES (?, ?, ?, ?, ?)",
            (database, name, partition, kind, json.dumps(value, sort_keys=True)),
        )

    def drop_statistics(self, database: str, name: str) -> None:
        self._write("DELETE FROM statistics WHERE db = ? AND name = ?", (database, name))

    def list_models(self, database: str) -> list[str]:
        return sorted(r[0] for r in self._rows("SELECT name FROM models WHERE db = ?", (database,)))

    def get_model(self, database: str, name: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT value FROM models WHERE db = ? AND name = ?", (database, name))
        return json.loads(rows[0][0]) if rows else None

    def put_model(self, database: str, name: str, value: dict[str, Any]) -> None:
        self._write(
            "INSERT OR REPLACE INTO models (db, name, value) VALUES (?, ?, ?)",
            (database, name, json.dumps(value, sort_keys=True)),
        )

    def remove_model(self, database: str, name: str) -> None:
        self._write("DELETE FROM models WHERE db = ? AND name = ?", (database, name))

    def move_statistics(self, database: str, name: str, new_database: str, new_name: str) -> None:
        self._write(
            "UPDATE OR REPLACE statistics SET db = ?, name = ? WHERE db = ? AND name = ?",
            (new_database, new_name, database, name),
        )

    def list_functions(self, database: str) -> list[str]:
        return sorted(r[0] for r in self._rows("SELECT name FROM functions WHERE db = ?", (database,)))

    def get_function(self, database: str, name: str) -> tuple[str, str] | None:
        rows = self._rows("SELECT identifier, language FROM functions WHERE db = ? AND name = ?", (database, name))
        return (rows[0][0], rows[0][1]) if rows else None

    def put_function(self, database: str, name: str, identifier: str, language: str) -> None:
        self._write(
            "INSERT OR REPLACE INTO functions (db, name, identifier, language) VALUES (?, ?, ?, ?)",
            (database, name, identifier, language),
        )

    def remove_function(self, database: str, name: str) -> None:
        self._write("DELETE FROM functions WHERE db = ? AND name = ?", (database, name))

    def close(self) -> None:
        with self._lock:
            self._conn.close()


# ---------------------------------------------------------------------- factories
@frozen_dataclass
class CatalogFactory:
    """How `CREATE CATALOG ... WITH ('type' = name, ...)` makes a catalog: its declared
    options (validated before `create` runs) and the store class."""

    name: str
    create: Callable[[str, dict[str, str], str | None], CatalogStore]
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()
    description: str = ""

    def validate(self, options: dict[str, str]) -> None:
        """Flink's option validation: missing required and unsupported options fail."""
        missing = [k for k in self.required if not options.get(k)]
        if missing:
            raise SqlValidationError(
                "One or more required options are missing.\n\nMissing required options are:\n\n" + "\n".join(missing)
            )
        supported = {"type", "property-version", *self.required, *self.optional}
        unknown = sorted(k for k in options if k not in supported)
        if unknown:
            raise SqlValidationError(
                f"Unsupported options found for '{self.name}'.\n\nUnsupported options:\n\n"
                + "\n".join(unknown)
                + "\n\nSupported options:\n\n"
                + "\n".join(sorted(supported))
            )


CATALOG_TYPES: dict[str, CatalogFactory] = {}
# Built-in catalog types declared in their own module, imported (and so registered) when a
# CREATE CATALOG names the type: {type: module}.
LAZY_CATALOG_TYPES: dict[str, str] = {"jdbc": "planner.catalog_jdbc"}


def register_catalog_type(factory: CatalogFactory) -> None:
    """Add a catalog type (built-ins below; plugins through `_load_plugins`)."""
    CATALOG_TYPES[factory.name] = factory


register_catalog_type(
    CatalogFactory(
        "generic_in_memory",
        InMemoryCatalogStore,
        optional=("default-database",),
        description="Flink's in-memory catalog: objects live as long as the session.",
    )
)
register_catalog_type(
    CatalogFactory(
        "sqlite",
        SqliteCatalogStore,
        required=("path",),
        optional=("default-database",),
        description="A persistent catalog in one SQLite file, shared by every process that opens it.",
    )
)


PLUGIN_GROUP = "streamsql.catalogs"


def _load_builtin(kind: str) -> None:
    """Import the module of a built-in type declared in `LAZY_CATALOG_TYPES` (it registers itself)."""
    import importlib

    if kind not in CATALOG_TYPES and kind in LAZY_CATALOG_TYPES:
        importlib.import_module(LAZY_CATALOG_TYPES[kind])


def catalog_type_names() -> list[str]:
    """Every catalog type known without reading plugins (built-in ones whose module is not
    loaded yet included)."""
    return sorted(set(CATALOG_TYPES) | set(LAZY_CATALOG_TYPES))


def _load_plugins() -> None:
    """Register the catalog types of the `streamsql.catalogs` entry points, once (a type
    may not take a built-in type's name, also of one not loaded yet)."""
    for kind in LAZY_CATALOG_TYPES:
        _load_builtin(kind)
    register_plugins(
        PLUGIN_GROUP, CatalogFactory, CATALOG_TYPES, register_catalog_type, SqlValidationError, "catalog type"
    )


def create_catalog_store(name: str, options: dict[str, str], comment: str | None = None) -> CatalogStore:
    """A catalog from its CREATE CATALOG options ('type' picks the factory)."""
    kind = options.get("type")
    if not kind:
        raise SqlValidationError(
            f"Catalog options do not contain an option key 'type' for discovering a catalog. Known types: "
            f"{', '.join(catalog_type_names())}"
        )
    _load_builtin(kind)
    if kind not in CATALOG_TYPES:
        _load_plugins()
    factory = CATALOG_TYPES.get(kind)
    if factory is None:
        raise SqlValidationError(
            f"Could not find any factory for identifier '{kind}' that implements "
            "'org.apache.flink.table.factories.CatalogFactory' in the classpath.\n\n"
            f"Available factory identifiers are:\n\n{chr(10).join(sorted(CATALOG_TYPES))}"
        )
    factory.validate(options)
    return factory.create(name, options, comment)
