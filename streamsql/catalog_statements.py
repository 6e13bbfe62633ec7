"""Running catalog statements in a TableEnvironment: catalogs, databases, SHOW, SHOW
CREATE, DESCRIBE, ALTER, modules and the JVM-only statements.

Each returns the TableResult whose rows the SQL client prints (the column names are
Flink's: `catalog name`, `database name`, `current catalog name`, `info name` /
`info value`, `result`, ...). Errors carry Flink's exception class and message
(`planner.catalog_store.CatalogError`), so the client's first error line reads as Flink's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from planner.catalog import like_pattern
from planner.catalog import show_create as object_ddl
from planner.catalog_objects import CatalogTable, CatalogView, quoted
from planner.catalog_store import CATALOG_TYPES, CatalogError, DatabaseInfo, create_catalog_store
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.statements import Describe, Show, Statement
from planner.statements_catalog import (
    AlterCatalog,
    AlterDatabase,
    AlterTable,
    AlterView,
    AnalyzeTable,
    CreateCatalog,
    CreateDatabase,
    DescribeCatalog,
    DropCatalog,
    DropDatabase,
    JvmStatement,
    ModuleStatement,
    ShowCreate,
    TruncateTable,
    UseCatalog,
    UseDatabase,
)
from planner.statements_dml import AlterFunction, Call, CompilePlan, DescribeJob, ExecutePlan, StopJob
from runtime.aggregates.types import AGGREGATE_FUNCTIONS
from runtime.checkpoint.options import SAVEPOINT_DIR
from runtime.connectors.base import get_connector
from runtime.functions.registry import function_names, lookup
from runtime.types import BOOLEAN, STRING, Field
from streamsql import models
from streamsql.catalog_stores import remove_catalog, store_catalog
from streamsql.pipeline import run_plan_statement
from streamsql.result import TableResult

if TYPE_CHECKING:
    from planner.catalog import Catalog
    from streamsql.environment import TableEnvironment

TABLE_EXCEPTION = "org.apache.flink.table.api.TableException"
VALIDATION = "org.apache.flink.table.api.ValidationException"
SQL_EXECUTION_EXCEPTION = "org.apache.flink.table.gateway.service.utils.SqlExecutionException"
# The modules a session can load: Flink's `core` holds the built-in functions.
KNOWN_MODULES = ("core",)


def _err(stmt: Statement, message: str, flink_class: str | None = None, hint: str | None = None) -> SqlValidationError:
    if flink_class:
        return CatalogError(message, flink_class, sql=stmt.sql, line=1, column=1, hint=hint)
    return SqlValidationError(message, sql=stmt.sql, line=1, column=1, hint=hint)


def _strings(header: str, values: list[str]) -> TableResult:
    return TableResult.of_rows((Field(header, STRING()),), [(v,) for v in values])


def _filter(names: list[str], stmt: Show) -> list[str]:
    if stmt.like is None:
        return names
    rx = like_pattern(stmt.like, stmt.ilike)
    return [n for n in names if bool(rx.fullmatch(n)) != stmt.not_like]


# ---------------------------------------------------------------------- catalogs
def create_catalog(env: TableEnvironment, stmt: CreateCatalog) -> TableResult:
    cat = env.catalog
    if stmt.name in cat.catalogs:
        if stmt.if_not_exists:
            return TableResult.ok()
        raise _err(
            stmt, f"Catalog {stmt.name} already exists.", "org.apache.flink.table.catalog.exceptions.CatalogException"
        )
    try:
        store = create_catalog_store(stmt.name, stmt.options, stmt.comment)
    except SqlValidationError as e:  # at the statement, keeping the catalog type's hint
        raise _err(stmt, e.message, hint=e.hint) from None
    store_catalog(env.get_config(), stmt.name, stmt.options)
    cat.add_catalog(store)
    return TableResult.ok()


def drop_catalog(env: TableEnvironment, stmt: DropCatalog) -> TableResult:
    cat = env.catalog
    if stmt.name not in cat.catalogs:
        if stmt.if_exists:
            return TableResult.ok()
        raise _err(stmt, f"Catalog {stmt.name} does not exist.")
    if stmt.name == cat.current_catalog:
        raise _err(
            stmt,
            "Cannot drop a catalog which is currently in use.",
            "org.apache.flink.table.catalog.exceptions.CatalogException",
        )
    remove_catalog(env.get_config(), stmt.name)
    cat.catalogs.pop(stmt.name).close()
    return TableResult.ok()


def use_catalog(env: TableEnvironment, stmt: UseCatalog) -> TableResult:
    cat = env.catalog
    store = cat.catalogs.get(stmt.name)
    if store is None:
        raise _err(
            stmt,
            f"A catalog with name [{stmt.name}] does not exist.",
            "org.apache.flink.table.catalog.exceptions.CatalogException",
        )
    cat.current_catalog = stmt.name
    cat.current_database = store.default_database
    return TableResult.ok()


def alter_catalog(env: TableEnvironment, stmt: AlterCatalog) -> TableResult:
    cat = env.catalog
    store = cat.catalogs.get(stmt.name)
    if store is None:
        raise _err(stmt, f"Catalog {stmt.name} does not exist.")
    if stmt.comment is not None:
        store.comment = stmt.comment or None
        return TableResult.ok()
    options = dict(store.options)
    if stmt.set_options is not None:
        if "type" in stmt.set_options and stmt.set_options["type"] != options.get("type"):
            raise _err(stmt, "ALTER CATALOG SET does not support changing 'type'")
        options.update(stmt.set_options)
    else:
        keys = stmt.reset_keys or ()
        if not keys:
            raise _err(stmt, "ALTER CATALOG RESET does not support empty key")
        if "type" in keys:
            raise _err(stmt, "ALTER CATALOG RESET does not support changing 'type'")
        for k in keys:
            options.pop(k, None)
    factory = CATALOG_TYPES[options["type"]]
    try:
        factory.validate(options)
    except SqlValidationError as e:
        raise _err(stmt, e.message) from None
    store_catalog(env.get_config(), stmt.name, options, replace=True)
    if options.get("path") != store.options.get("path"):  # a persistent catalog moved: open the new file
        store.close()
        cat.add_catalog(create_catalog_store(stmt.name, options, store.comment))
    else:
        store.options = options
    return TableResult.ok()


def describe_catalog(env: TableEnvironment, stmt: DescribeCatalog) -> TableResult:
    store = env.catalog.catalogs.get(stmt.name)
    if store is None:
        raise _err(stmt, f"Cannot obtain metadata information from Catalog {stmt.name}.")
    rows = [("name", store.name), ("type", store.options.get("type", "")), ("comment", store.comment or "")]
    if stmt.extended:
        rows += [(f"option:{k}", v) for k, v in sorted(store.options.items()) if k != "type"]
    return TableResult.of_rows((Field("info name", STRING()), Field("info value", STRING())), rows)


def show_create_catalog(store: Any) -> str:
    text = f"CREATE CATALOG {quoted((store.name,))}\n"
    if store.comment:
        text += "COMMENT '" + store.comment.replace("'", "''") + "'\n"
    opts = ",\n".join(
        "  '{}' = '{}'".format(k.replace("'", "''"), v.replace("'", "''")) for k, v in sorted(store.options.items())
    )
    return text + f"WITH (\n{opts}\n)\n"


# ---------------------------------------------------------------------- databases
def _database_path(cat: Catalog, stmt: Statement, name: tuple[str, ...]) -> tuple[str, str]:
    catalog, database = (cat.current_catalog, name[0]) if len(name) == 1 else (name[0], name[1])
    if catalog not in cat.catalogs:
        raise _err(stmt, f"Catalog {catalog} does not exist")
    return catalog, database


def create_database(env: TableEnvironment, stmt: CreateDatabase) -> TableResult:
    catalog, database = _database_path(env.catalog, stmt, stmt.name)
    store = env.catalog.catalogs[catalog]
    if store.get_database(database) is not None:
        if stmt.if_not_exists:
            return TableResult.ok()
        raise _err(
            stmt,
            f"Database {database} already exists in Catalog {catalog}.",
            "org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException",
        )
    store.create_database(DatabaseInfo(database, stmt.comment, dict(stmt.options)))
    return TableResult.ok()


def _missing_database(stmt: Statement, catalog: str, database: str) -> SqlValidationError:
    return _err(
        stmt,
        f"Database {database} does not exist in Catalog {catalog}.",
        "org.apache.flink.table.catalog.exceptions.DatabaseNotExistException",
    )


def drop_database(env: TableEnvironment, stmt: DropDatabase) -> TableResult:
    cat = env.catalog
    catalog, database = _database_path(cat, stmt, stmt.name)
    store = cat.catalogs[catalog]
    if (catalog, database) == (cat.current_catalog, cat.current_database):
        raise _err(stmt, "Cannot drop a database which is currently in use.")
    if store.get_database(database) is None:
        if stmt.if_exists:
            return TableResult.ok()
        raise _missing_database(stmt, catalog, database)
    if not stmt.cascade and (
        store.list_objects(database) or store.list_functions(database) or store.list_models(database)
    ):
        raise _err(
            stmt,
            f"Database {database} in catalog {catalog} is not empty.",
            "org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException",
        )
    store.drop_database(database)
    return TableResult.ok()


def use_database(env: TableEnvironment, stmt: UseDatabase) -> TableResult:
    cat = env.catalog
    catalog, database = _database_path(cat, stmt, stmt.name)
    if cat.catalogs[catalog].get_database(database) is None:
        raise _err(
            stmt,
            f"A database with name [{database}] does not exist in the catalog: [{catalog}].",
            "org.apache.flink.table.catalog.exceptions.CatalogException",
        )
    cat.current_catalog, cat.current_database = catalog, database
    return TableResult.ok()


def alter_database(env: TableEnvironment, stmt: AlterDatabase) -> TableResult:
    catalog, database = _database_path(env.catalog, stmt, stmt.name)
    store = env.catalog.catalogs[catalog]
    info = store.get_database(database)
    if info is None:
        raise _missing_database(stmt, catalog, database)
    store.alter_database(DatabaseInfo(database, info.comment, {**info.properties, **stmt.options}))
    return TableResult.ok()


# ---------------------------------------------------------------------- SHOW / DESCRIBE
def show(env: TableEnvironment, stmt: Show) -> TableResult | None:
    """SHOW statements about catalogs; None for the others (environment.py answers them)."""
    cat = env.catalog
    what = stmt.what
    if what == "CURRENT CATALOG":
        return _strings("current catalog name", [cat.current_catalog])
    if what == "CURRENT DATABASE":
        return _strings("current database name", [cat.current_database])
    if what == "CATALOGS":
        return _strings("catalog name", _filter(sorted(cat.catalogs), stmt))
    if what == "DATABASES":
        catalog = stmt.scope[0] if stmt.scope else cat.current_catalog
        if catalog not in cat.catalogs:
            raise _err(stmt, f"Catalog {catalog} does not exist")
        return _strings("database name", _filter(cat.catalogs[catalog].list_databases(), stmt))
    if what in ("TABLES", "VIEWS", "MATERIALIZED TABLES"):
        catalog, database = cat.current_catalog, cat.current_database
        if stmt.scope:
            catalog, database = _database_path(cat, stmt, stmt.scope)
            if cat.catalogs[catalog].get_database(database) is None:
                raise _err(stmt, f"Database `{catalog}`.`{database}` doesn't exist.")
        kind = {"VIEWS": "VIEW", "MATERIALIZED TABLES": "MATERIALIZED TABLE"}.get(what)
        names = cat.object_names(catalog, database, kind)
        from streamsql.table_env_api import visible

        header = {"TABLES": "table name", "VIEWS": "view name"}.get(what, "materialized table")
        return _strings(header, _filter(visible(names), stmt))
    if what == "COLUMNS":
        assert stmt.scope is not None
        rows = describe_rows(env, stmt.scope, stmt)
        if stmt.like is not None:
            rx = like_pattern(stmt.like, stmt.ilike)
            rows = [r for r in rows if bool(rx.fullmatch(r[0])) != stmt.not_like]
        return _describe_result(env, stmt.scope, rows)
    if what in ("MODULES", "FULL MODULES"):
        modules = env.modules
        if what == "MODULES":
            return _strings("module name", [m for m, used in modules if used])
        return TableResult.of_rows(
            (Field("module name", STRING()), Field("used", BOOLEAN())), [(m, used) for m, used in modules]
        )
    if what == "JARS":
        return _strings("jars", [])
    if what == "PROCEDURES":
        return _strings("procedure name", [])
    if what == "MODELS":
        return models.show_models(env, stmt)
    if what == "PARTITIONS":
        return show_partitions(env, stmt)
    return None


def describe_rows(env: TableEnvironment, name: tuple[str, ...], stmt: Statement) -> list[tuple[Any, ...]]:
    try:
        return env.catalog.describe(name)
    except SqlValidationError as e:
        raise _err(stmt, e.message) from None


def _describe_result(env: TableEnvironment, name: tuple[str, ...], rows: list[tuple[Any, ...]]) -> TableResult:
    names = ["name", "type", "null", "key", "extras", "watermark"]
    obj = env.catalog.get(name)
    if isinstance(obj, CatalogTable) and any(c.definition.comment for c in obj.columns):
        names.append("comment")
    fields = tuple(Field(n, BOOLEAN() if n == "null" else STRING()) for n in names)
    return TableResult.of_rows(fields, rows)


def describe(env: TableEnvironment, stmt: Describe) -> TableResult:
    return _describe_result(env, stmt.name, describe_rows(env, stmt.name, stmt))


def show_create(env: TableEnvironment, stmt: ShowCreate) -> TableResult:
    cat = env.catalog
    if stmt.kind == "CATALOG":
        store = cat.catalogs.get(stmt.name[0])
        if store is None:
            raise _err(stmt, f"Catalog {stmt.name[0]} does not exist.")
        return _strings("result", [show_create_catalog(store)])
    path = cat.qualify(stmt.name, stmt.sql)
    obj = cat.get_path(path)
    kind = stmt.kind
    if obj is None:
        noun = "Table" if kind != "VIEW" else "View"
        raise _err(
            stmt,
            f"Could not execute SHOW CREATE {kind}. {noun} with identifier {quoted(path)} does not exist.",
            "org.apache.flink.table.api.ValidationException",
        )
    if kind in ("TABLE", "MATERIALIZED TABLE") and isinstance(obj, CatalogView):
        raise _err(
            stmt,
            f"SHOW CREATE TABLE is only supported for tables, but {quoted(path)} is a view. "
            "Please use SHOW CREATE VIEW instead.",
            TABLE_EXCEPTION,
        )
    if kind == "VIEW" and isinstance(obj, CatalogTable):
        raise _err(
            stmt,
            f"SHOW CREATE VIEW is only supported for views, but {quoted(path)} is a table. "
            "Please use SHOW CREATE TABLE instead.",
            TABLE_EXCEPTION,
        )
    materialized = isinstance(obj, CatalogTable) and obj.materialized is not None
    if kind == "MATERIALIZED TABLE" and not materialized:
        raise _err(
            stmt,
            f"SHOW CREATE MATERIALIZED TABLE is only supported for materialized tables, but {quoted(path)} is a "
            "table. Please use SHOW CREATE TABLE instead.",
            TABLE_EXCEPTION,
        )
    if kind == "TABLE" and materialized:
        raise _err(
            stmt,
            f"SHOW CREATE TABLE is only supported for tables, but {quoted(path)} is a materialized table. "
            "Please use SHOW CREATE MATERIALIZED TABLE instead.",
            TABLE_EXCEPTION,
        )
    return _strings("result", [object_ddl(obj, cat)])


# ---------------------------------------------------------------------- ALTER, modules, JVM
def alter_table(env: TableEnvironment, stmt: AlterTable) -> TableResult:
    from planner.catalog_alter import alter_table as apply

    apply(env.catalog, stmt)
    return TableResult.ok()


def alter_view(env: TableEnvironment, stmt: AlterView) -> TableResult:
    from planner.catalog_alter import alter_view as apply

    apply(env.catalog, stmt, "STREAMING" if env.is_streaming else "BATCH")
    return TableResult.ok()


def module_statement(env: TableEnvironment, stmt: ModuleStatement) -> TableResult:
    """Flink's module statements over the one module there is, `core` (the built-in
    functions): LOAD and UNLOAD keep Flink's bookkeeping and messages."""
    modules = env.modules
    loaded = [m for m, _ in modules]
    if stmt.action == "LOAD":
        name = stmt.names[0]
        if "type" in stmt.options:  # Flink finds a module's factory by the module's name
            raise _err(
                stmt,
                f"Option 'type' = '{stmt.options['type']}' is not supported since module name is used to find module",
            )
        if name not in KNOWN_MODULES:
            raise _err(
                stmt,
                f"Could not find any factory for identifier '{name}' that implements "
                "'org.apache.flink.table.factories.ModuleFactory' in the classpath.\n\n"
                f"Available factory identifiers are:\n\n{chr(10).join(KNOWN_MODULES)}",
            )
        if name in loaded:
            raise _err(stmt, f"A module with name '{name}' already exists")
        modules.append((name, True))
    elif stmt.action == "UNLOAD":
        name = stmt.names[0]
        if name not in loaded:
            raise _err(stmt, f"No module with name '{name}' exists")
        if name == "core":
            raise UnsupportedSqlError(
                "UNLOAD MODULE core is not supported: streamsql's built-in functions cannot be switched off",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        modules[:] = [(m, u) for m, u in modules if m != name]
    else:
        for name in stmt.names:
            if name not in loaded:
                raise _err(stmt, f"No module with name '{name}' exists")
        if len(set(stmt.names)) != len(stmt.names):
            dup = next(n for n in stmt.names if stmt.names.count(n) > 1)
            raise _err(stmt, f"Module '{dup}' appears more than once")
        if "core" not in stmt.names:
            raise UnsupportedSqlError(
                "USE MODULES without core is not supported: streamsql's built-in functions cannot be switched off",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        order = list(stmt.names) + [m for m in loaded if m not in stmt.names]
        modules[:] = [(m, m in stmt.names) for m in order]
    return TableResult.ok()


def jvm_statement(env: TableEnvironment, stmt: JvmStatement) -> TableResult:
    """ADD JAR / REMOVE JAR: a JAR is Java code, and there is no JVM to load it into."""
    raise UnsupportedSqlError(
        f"{stmt.what} is not supported: a JAR holds Java code, and streamsql runs Flink SQL without a JVM",
        sql=stmt.sql,
        line=1,
        column=1,
        hint="Write user-defined functions in Python instead (CREATE FUNCTION f AS 'pkg.module.fn' LANGUAGE "
        "PYTHON, docs/udf.md); connectors and formats are built in (docs/connectors/).",
    )


def truncate_table(env: TableEnvironment, stmt: TruncateTable) -> TableResult:
    obj = env.catalog.lookup(stmt.name, None, stmt.sql)
    if env.is_streaming:
        raise _err(stmt, "TRUNCATE TABLE statement is not supported in streaming mode.", TABLE_EXCEPTION)
    connector = obj.connector if isinstance(obj, CatalogTable) else "view"
    raise _err(
        stmt,
        f"TRUNCATE TABLE statement is not supported for the table {quoted(obj.path)} since the table hasn't "
        f"implemented the interface org.apache.flink.table.connector.sink.abilities.SupportsTruncate "
        f"(connector '{connector}').",
        TABLE_EXCEPTION,
    )


def analyze_table(env: TableEnvironment, stmt: AnalyzeTable) -> TableResult:
    from streamsql.analyze_table import analyze_table as run

    return run(env, stmt)


def describe_job(env: TableEnvironment, stmt: DescribeJob) -> TableResult:
    """DESCRIBE JOB '<id>': the job's row of SHOW JOBS."""
    handle = env.jobs.get(stmt.job_id)
    if handle is None:
        raise _err(stmt, f"Described job {stmt.job_id} does not exist.", SQL_EXECUTION_EXCEPTION)
    return env.job_rows([(stmt.job_id, handle)])


def stop_job(env: TableEnvironment, stmt: StopJob) -> TableResult:
    """STOP JOB '<id>' [WITH SAVEPOINT] [WITH DRAIN]: cancel the job, or stop it with a
    savepoint (answered with its path)."""
    handle = env.jobs.get(stmt.job_id)
    if handle is None:
        raise _err(
            stmt,
            f"Could not find Flink job ({stmt.job_id})",
            "org.apache.flink.runtime.messaging.FlinkJobNotFoundException",
        )
    if not stmt.with_savepoint:
        handle.cancel()
        handle.join(30)
        return TableResult.ok()
    try:
        path = handle.stop_with_savepoint(SAVEPOINT_DIR.get(env.get_config()), drain=stmt.with_drain)
    except Exception as e:  # noqa: BLE001 - the job keeps running; say why
        raise _err(stmt, f"Could not stop job {stmt.job_id} with savepoint: {e}", SQL_EXECUTION_EXCEPTION) from None
    return _strings("savepoint path", [path])


def call(env: TableEnvironment, stmt: Call) -> TableResult:
    """CALL: streamsql's catalogs hold no procedures (SHOW PROCEDURES lists none). Flink
    looks a procedure up in the validator's operator table, and an unknown one (or one of
    an unknown catalog) is Calcite's "No match found for function signature p(<TYPE>, ...)"
    at the procedure's name."""
    from planner.binder.expressions import ExprBinder
    from planner.binder.scope import CALCITE_VALIDATOR, Scope
    from planner.binder.types import calcite_signature

    env.catalog.qualify(stmt.procedure, stmt.sql)  # at most 3 parts
    binder = ExprBinder(Scope([], stmt.sql), stmt.sql, clause="CALL")
    signature = calcite_signature([binder.bind(a).type for a in stmt.arguments])
    line, column = stmt.name_position
    raise SqlValidationError(
        f"No match found for function signature {stmt.procedure[-1]}({signature})",
        sql=stmt.sql,
        line=line,
        column=column,
        hint="streamsql's catalogs have no procedures (SHOW PROCEDURES lists none).",
        flink_class=CALCITE_VALIDATOR,
    )


def alter_function(env: TableEnvironment, stmt: AlterFunction) -> TableResult:
    """ALTER FUNCTION: a permanent (catalog) function gets another Python identifier."""
    if stmt.system:
        raise _err(stmt, "Alter temporary system function is not supported", VALIDATION)
    if stmt.temporary:
        raise _err(stmt, "Alter temporary catalog function is not supported", VALIDATION)
    env._functions().alter_path(tuple(stmt.name), stmt)  # noqa: SLF001 - the session's function catalog
    return TableResult.ok()


def show_partitions(env: TableEnvironment, stmt: Show) -> TableResult:
    """SHOW PARTITIONS t [PARTITION (k = 'v', ...)]: the partitions the table's connector
    holds (the filesystem connector: its `k=v/` directories), as `k=v/k2=v2` rows."""
    assert stmt.scope is not None
    obj = env.catalog.lookup(stmt.scope, None, stmt.sql)
    path = obj.path
    if not isinstance(obj, CatalogTable):
        raise _err(stmt, f"Table {quoted(path)} is a view; SHOW PARTITIONS needs a table.", VALIDATION)
    if not obj.partitioned_by:
        raise _err(
            stmt,
            f"Table {path[1]}.{path[2]} in catalog {path[0]} is not partitioned.",
            "org.apache.flink.table.catalog.exceptions.TableNotPartitionedException",
        )
    lister = get_connector(obj.connector).list_partitions
    if lister is None:
        raise UnsupportedSqlError(
            f"SHOW PARTITIONS is not supported for connector '{obj.connector}': only the filesystem connector "
            "keeps partitions streamsql can list.",
            sql=stmt.sql,
            line=1,
            column=1,
        )
    spec = dict(stmt.partition)
    rows = [
        "/".join(f"{k}={p[k]}" for k in obj.partitioned_by)
        for p in lister(dict(obj.options), obj.partitioned_by)
        if all(p.get(k) == v for k, v in spec.items())
    ]
    return _strings("partition name", sorted(rows))


HANDLERS: dict[type, Callable[[Any, Any], TableResult]] = {
    CreateCatalog: create_catalog,
    DropCatalog: drop_catalog,
    UseCatalog: use_catalog,
    AlterCatalog: alter_catalog,
    DescribeCatalog: describe_catalog,
    CreateDatabase: create_database,
    DropDatabase: drop_database,
    UseDatabase: use_database,
    AlterDatabase: alter_database,
    ShowCreate: show_create,
    AlterTable: alter_table,
    AlterView: alter_view,
    ModuleStatement: module_statement,
    JvmStatement: jvm_statement,
    TruncateTable: truncate_table,
    AnalyzeTable: analyze_table,
    DescribeJob: describe_job,
    StopJob: stop_job,
    Call: call,
    AlterFunction: alter_function,
    CompilePlan: run_plan_statement,
    ExecutePlan: run_plan_statement,
    **models.HANDLERS,
}


# ---------------------------------------------------------------------- functions
def show_functions(env: TableEnvironment, stmt: Show) -> TableResult:
    """SHOW [USER] FUNCTIONS [FROM|IN [c.]db] [[NOT] [I]LIKE p]: built-ins (not for USER)
    and the user functions, lower-case and sorted, as Flink lists them."""
    scope: tuple[str, str] | None = None
    if stmt.scope:
        scope = _database_path(env.catalog, stmt, stmt.scope)
        if env.catalog.catalogs[scope[0]].get_database(scope[1]) is None:
            raise _err(stmt, f"Database `{scope[0]}`.`{scope[1]}` doesn't exist.")
    user = set(env._functions().names(scope))  # noqa: SLF001 - the session's function catalog
    names = user if stmt.what == "USER FUNCTIONS" else set(function_names()) | user
    return _strings("function name", _filter(sorted(names), stmt))


def describe_function(env: TableEnvironment, stmt: Any) -> TableResult:
    """DESCRIBE FUNCTION [EXTENDED] f: Flink's `info name` / `info value` rows."""
    name = stmt.name[-1]
    user = env._functions().lookup(name)  # noqa: SLF001 - the session's function catalog
    rows: list[tuple[str, str]]
    if user is not None:
        rows = [
            ("system function", "false"),
            ("temporary", str(user.temporary).lower()),
            ("class name", user.identifier or user.name),
            ("function language", "PYTHON"),
            ("resource uris", "[]"),
        ]
        if stmt.extended:
            rows += [
                ("kind", {"aggregate": "AGGREGATE", "table": "TABLE"}.get(user.kind, "SCALAR")),
                ("requirements", "[]"),
                ("deterministic", "true"),
                ("constant folding", "true"),
            ]
        return TableResult.of_rows((Field("info name", STRING()), Field("info value", STRING())), rows)
    lower = name.lower()
    builtin = lookup(lower)
    if builtin is None and lower not in AGGREGATE_FUNCTIONS:
        raise _err(
            stmt,
            f"Function '{'.'.join(stmt.name)}' does not exist.",
            "org.apache.flink.table.api.ValidationException",
        )
    rows = [("system function", "true"), ("temporary", "false")]
    if stmt.extended:
        deterministic = builtin.deterministic if builtin is not None else True
        rows += [
            ("kind", "AGGREGATE" if lower in AGGREGATE_FUNCTIONS else "SCALAR"),
            ("requirements", "[]"),
            ("deterministic", str(deterministic).lower()),
            ("constant folding", str(deterministic).lower()),
        ]
    return TableResult.of_rows((Field("info name", STRING()), Field("info value", STRING())), rows)
