"""User-defined functions known to a catalog (held by `planner.catalog.Catalog` as
`catalog.functions`).

A `FunctionDef` records what the binder needs to type a call (kind, result type(s)) and
the *reference* the JobGraph carries so the runtime can find the function again
(`runtime.udf_registry.make_reference`: importable module + qualname, and/or the id of
the process-level registry entry for functions defined interactively).

Resolution order follows Flink: temporary system functions shadow built-ins; other
user functions are found only when no built-in has the name; temporary catalog functions
shadow permanent ones. The binder reaches the catalog being bound through a context
variable (`using_functions` / `lookup_function`), so expression binding needs no new
parameters.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from planner.dialect.types import UnknownTypeError, to_data_type
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.parse_cursor import Cursor
from runtime.aggregates.types import AGGREGATE_FUNCTIONS
from runtime.frozen import frozen_dataclass
from runtime.functions.registry import lookup as builtin
from runtime.types import DataType
from runtime.udf_registry import UdfSpec, import_object, make_reference, register, spec_of, unregister


def _import_function(name: str, identifier: str, sql: str | None = None) -> Any:
    """The object a function's `AS 'identifier'` names (CREATE/ALTER FUNCTION, or a
    permanent function's first use): one that cannot be imported (missing, or its module
    raised while imported: the user's lines, runtime/udf_registry.py) is Flink's
    validation error naming the function, never an internal error."""
    try:
        return import_object(identifier)
    except (ImportError, AttributeError) as e:
        where: dict[str, Any] = {"sql": sql, "line": 1, "column": 1} if sql is not None else {}
        raise SqlValidationError(f"Cannot instantiate user-defined function '{name}': {e}", **where) from None


@frozen_dataclass
class FunctionDef:
    """A user function of the catalog (CREATE FUNCTION or the Table API's registration):
    its kind, the reference that imports it, and the types it declares."""

    name: str  # lower case
    kind: str  # scalar | table | aggregate
    reference: str  # JSON (runtime.udf_registry)
    result_type: DataType | None = None
    result_types: tuple[DataType, ...] = ()
    result_names: tuple[str, ...] = ()
    input_types: tuple[DataType, ...] | None = None
    func_type: str = "general"
    temporary: bool = True
    system: bool = False
    registry_id: str | None = None
    identifier: str | None = None  # CREATE FUNCTION ... AS 'identifier'


def _type(t: Any) -> DataType:
    """A DataType from a DataType or a Flink type string ('BIGINT', 'ROW<a INT>')."""
    if isinstance(t, DataType):
        return t
    if isinstance(t, str):
        try:
            return to_data_type(Cursor(t).data_type())
        except UnknownTypeError as e:  # a declaration, not a statement: no position to show
            raise SqlValidationError(str(e)) from None
    raise SqlValidationError(f"Unsupported UDF type declaration {t!r}; use streamsql.udf.DataTypes")


def definition_of(name: str, obj: Any, temporary: bool, system: bool, identifier: str | None = None) -> FunctionDef:
    """A FunctionDef for a decorated UDF object (see `streamsql.udf`)."""
    spec = spec_of(obj)
    if spec is None:
        raise SqlValidationError(
            f"Function '{name}' is not a Python UDF: wrap it with streamsql.udf.udf / udtf / udaf "
            "(they declare the result type)"
        )
    lname = name.lower()
    spec = UdfSpec(**{**spec.__dict__, "name": lname})
    rid = register(spec)
    result_type = _type(spec.result_type) if spec.result_type is not None else None
    result_types: tuple[DataType, ...] = ()
    names: tuple[str, ...] = ()
    if spec.kind == "table":
        raw = list(spec.result_types or ([spec.result_type] if spec.result_type is not None else []))
        if len(raw) == 1 and isinstance(raw[0], DataType) and raw[0].name == "ROW" and raw[0].field_names:
            result_types = tuple(raw[0].children)
            names = tuple(raw[0].field_names)
        else:
            result_types = tuple(_type(t) for t in raw)
            names = tuple(f"f{i}" for i in range(len(result_types)))
        if not result_types:
            raise SqlValidationError(f"Table function '{name}' must declare result_types")
    elif result_type is None:
        raise SqlValidationError(f"Function '{name}' must declare a result_type")
    inputs = tuple(_type(t) for t in spec.input_types) if spec.input_types else None
    return FunctionDef(
        name=lname,
        kind=spec.kind,
        reference=make_reference(spec, obj, rid),
        result_type=result_type,
        result_types=result_types,
        result_names=names,
        input_types=inputs,
        func_type=spec.func_type,
        temporary=temporary,
        system=system,
        registry_id=rid,
        identifier=identifier,
    )


class FunctionCatalog:
    """Temporary system, temporary and permanent user functions by (lower-case) name.

    Permanent functions (CREATE FUNCTION ... LANGUAGE PYTHON) belong to a catalog's
    database: the catalog store keeps their identifier (so a persistent catalog keeps them
    across restarts) and they are found in the current catalog and database, as in Flink.
    Python objects registered through the Table API are kept here, by name."""

    def __init__(self, catalogs: Any = None) -> None:
        self._system: dict[str, FunctionDef] = {}
        self._temporary: dict[str, FunctionDef] = {}
        self._permanent: dict[str, FunctionDef] = {}
        self._catalogs = catalogs  # planner.catalog.Catalog (the catalog manager), if any
        self._loaded: dict[tuple[str, str, str, str], FunctionDef] = {}

    def _scope(self, temporary: bool, system: bool) -> dict[str, FunctionDef]:
        if system:
            return self._system
        return self._temporary if temporary else self._permanent

    def _store(self, path: tuple[str, ...] | None = None) -> tuple[Any, str, str] | None:
        """(store, database, name) of a permanent function path in the catalogs."""
        cats = self._catalogs
        if cats is None or path is None:
            return None
        full = cats.qualify(path)
        store = cats.catalogs.get(full[0])
        if store is None or store.get_database(full[1]) is None:
            raise SqlValidationError(f"Database {full[1]} does not exist in Catalog {full[0]}.")
        return store, full[1], full[2].lower()

    def _stored(self, name: str) -> FunctionDef | None:
        """A permanent function of the current catalog and database."""
        cats = self._catalogs
        if cats is None:
            return None
        store = cats.catalogs.get(cats.current_catalog)
        if store is None or store.get_database(cats.current_database) is None:
            return None
        found = store.get_function(cats.current_database, name)
        if found is None:
            return None
        key = (cats.current_catalog, cats.current_database, name, found[0])
        if key not in self._loaded:
            self._loaded[key] = definition_of(name, _import_function(name, found[0]), False, False, found[0])
        return self._loaded[key]

    def _stored_names(self) -> set[str]:
        cats = self._catalogs
        if cats is None:
            return set()
        store = cats.catalogs.get(cats.current_catalog)
        if store is None or store.get_database(cats.current_database) is None:
            return set()
        return set(store.list_functions(cats.current_database))

    def register(self, defn: FunctionDef, if_not_exists: bool = False, path: tuple[str, ...] | None = None) -> bool:
        target = self._store(path) if not defn.temporary and not defn.system and defn.identifier else None
        if target is not None:
            store, database, name = target
            if store.get_function(database, name) is not None:
                if if_not_exists:
                    return False
                raise SqlValidationError(f"Could not register function. A function named '{name}' already exists.")
            store.put_function(database, name, defn.identifier, "PYTHON")
            return True
        scope = self._scope(defn.temporary, defn.system)
        if defn.name in scope:
            if if_not_exists:
                return False
            what = "temporary system function" if defn.system else "function"
            raise SqlValidationError(f"Could not register {what}. A function named '{defn.name}' already exists.")
        scope[defn.name] = defn
        return True

    def create(self, name: str, obj: Any, temporary: bool = True, system: bool = False) -> FunctionDef:
        """Register a Python object (t_env.create_temporary_function & co.); replaces an
        existing temporary function of the same name, as PyFlink does."""
        defn = definition_of(name, obj, temporary, system)
        old = self._scope(temporary, system).pop(defn.name, None)
        if old is not None and old.registry_id:
            unregister(old.registry_id)
        self.register(defn)
        return defn

    def create_from_statement(self, stmt: Any) -> bool:
        """CREATE [TEMPORARY [SYSTEM]] FUNCTION ... AS 'pkg.module.name' LANGUAGE PYTHON."""
        name = stmt.name[-1]
        if stmt.language != "PYTHON":
            raise UnsupportedSqlError(
                f"Function '{name}' is LANGUAGE {stmt.language}: {stmt.language.title()} functions need a JVM, which "
                "streamsql does not have. Write it in Python and declare LANGUAGE PYTHON "
                "(AS 'package.module.function', see docs/udf.md).",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        if stmt.if_not_exists and name.lower() in self._scope(stmt.temporary, stmt.system):
            return False
        obj = _import_function(name, stmt.identifier, stmt.sql)
        defn = definition_of(name, obj, stmt.temporary, stmt.system, stmt.identifier)
        return self.register(defn, stmt.if_not_exists, tuple(stmt.name))

    def drop_path(self, path: tuple[str, ...], temporary: bool, system: bool, if_exists: bool) -> bool:
        """DROP [TEMPORARY [SYSTEM]] FUNCTION [IF EXISTS] path."""
        if not temporary and not system:
            target = self._store(path)
            if target is not None:
                store, database, name = target
                if store.get_function(database, name) is not None:
                    store.remove_function(database, name)
                    return True
        return self.drop(path[-1], temporary, system, if_exists)

    def alter_path(self, path: tuple[str, ...], stmt: Any) -> bool:
        """ALTER FUNCTION [IF EXISTS] path AS 'identifier' LANGUAGE PYTHON: a permanent
        function gets another implementation (False: IF EXISTS and there is none)."""
        target = self._store(path)
        if target is None or target[0].get_function(target[1], target[2]) is None:
            if stmt.if_exists:
                return False
            full = self._catalogs.qualify(path) if self._catalogs is not None else ("", "", path[-1])
            raise SqlValidationError(f"Function {full[1]}.{full[2]} does not exist in Catalog {full[0]}.")
        if stmt.language != "PYTHON":
            raise UnsupportedSqlError(
                f"Function '{path[-1]}' is LANGUAGE {stmt.language}: {stmt.language.title()} functions need a JVM, "
                "which streamsql does not have. Declare LANGUAGE PYTHON (see docs/udf.md).",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        _import_function(path[-1], stmt.identifier, stmt.sql)
        store, database, name = target
        store.put_function(database, name, stmt.identifier, "PYTHON")
        self._loaded = {k: v for k, v in self._loaded.items() if k[1:3] != (database, name)}
        return True

    def drop(self, name: str, temporary: bool = True, system: bool = False, if_exists: bool = False) -> bool:
        scope = self._scope(temporary, system)
        defn = scope.pop(name.lower(), None)
        if defn is None:
            if if_exists:
                return False
            raise SqlValidationError(f"Function {name} doesn't exist.")
        if defn.registry_id:
            unregister(defn.registry_id)
        return True

    def lookup(self, name: str) -> FunctionDef | None:
        """The user function called `name`, honouring built-in precedence."""
        n = name.lower()
        if n in self._system:
            return self._system[n]

        if n in AGGREGATE_FUNCTIONS or builtin(n) is not None:
            return None
        return self._temporary.get(n) or self._permanent.get(n) or self._stored(n)

    def lookup_path(self, path: tuple[str, ...]) -> FunctionDef | None:
        """The permanent function at a qualified path (`db.f`, `cat.db.f`), or None."""
        cats = self._catalogs
        if cats is None or len(path) not in (2, 3):
            return None
        full = cats.qualify(path)
        store = cats.catalogs.get(full[0])
        if store is None or store.get_database(full[1]) is None:
            return None
        name = full[2].lower()
        found = store.get_function(full[1], name)
        if found is None:
            return None
        key = (full[0], full[1], name, found[0])
        if key not in self._loaded:
            self._loaded[key] = definition_of(name, _import_function(name, found[0]), False, False, found[0])
        return self._loaded[key]

    def names(self, database: tuple[str, str] | None = None) -> list[str]:
        """The user functions' names: temporary system and temporary ones, and the permanent
        ones of the current database or, given, of (catalog, database) (SHOW FUNCTIONS FROM)."""
        current = self._catalogs is not None and database == (
            self._catalogs.current_catalog,
            self._catalogs.current_database,
        )
        if database is None or current:
            stored = set(self._permanent) | self._stored_names()
        else:
            store = self._catalogs.catalogs.get(database[0]) if self._catalogs is not None else None
            stored = set()
            if store is not None and store.get_database(database[1]) is not None:
                stored = set(store.list_functions(database[1]))
        return sorted(set(self._system) | set(self._temporary) | stored)


_CURRENT: contextvars.ContextVar[FunctionCatalog | None] = contextvars.ContextVar("streamsql_functions", default=None)


@contextmanager
def using_functions(functions: FunctionCatalog | None) -> Iterator[None]:
    """Make `functions` the catalog `lookup_function` consults while binding."""
    token = _CURRENT.set(functions)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def lookup_function(name: str, kind: str | None = None) -> FunctionDef | None:
    """The user function `name` of the catalog being bound (of `kind`, if given)."""
    cat = _CURRENT.get()
    if cat is None:
        return None
    d = cat.lookup(name)
    if d is None or (kind is not None and d.kind != kind):
        return None
    return d


def lookup_function_path(path: tuple[str, ...]) -> FunctionDef | None:
    """The catalog function at `db.f` / `cat.db.f` of the catalog being bound."""
    cat = _CURRENT.get()
    return cat.lookup_path(path) if cat is not None else None


def functions_of(catalog: Any) -> FunctionCatalog:
    """The FunctionCatalog held by `catalog` (created on first use)."""
    fc = getattr(catalog, "functions", None)
    if not isinstance(fc, FunctionCatalog):
        fc = FunctionCatalog(catalog if hasattr(catalog, "catalogs") else None)
        catalog.functions = fc
    return fc
