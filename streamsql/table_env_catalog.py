"""The catalog, module, function and plan half of PyFlink's TableEnvironment API.

Each method is the SQL statement of the same meaning (`use_catalog('c')` is `USE CATALOG
c`, `list_databases()` reads `SHOW DATABASES`), so the Python API and SQL resolve names,
fail and print alike; the statements themselves live in the planner and the catalog.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from streamsql.sql_text import quote
from streamsql.unsupported import JAVA, refuse

if TYPE_CHECKING:
    from streamsql.descriptors import TableDescriptor
    from streamsql.pipeline import CompiledPlan, PlanReference
    from streamsql.result import TableResult
    from streamsql.table import Table


def _path_sql(path: str) -> str:
    return ".".join(quote(p) for p in path.split("."))


def add_python_file(file_path: str) -> None:
    """Make a Python file or directory importable by this job's functions (they run in
    this process, so it goes on sys.path)."""
    path = os.path.abspath(file_path)
    entry = path if os.path.isdir(path) else os.path.dirname(path)
    if entry not in sys.path:
        sys.path.insert(0, entry)


def add_python_archive(archive_path: str, target_dir: str | None = None) -> None:
    """Unpack an archive into this process's working directory (as PyFlink does into the
    workers'), under `target_dir` or the archive's file name."""
    import shutil

    dest = os.path.abspath(target_dir or os.path.basename(archive_path))
    shutil.unpack_archive(archive_path, dest)


def check_python_requirements(requirements_file_path: str) -> None:
    """Functions run in this process: its environment must already hold the requirements.
    Checks that each one is installed and names the missing ones."""
    from importlib import metadata

    missing = []
    with open(requirements_file_path, encoding="utf-8") as f:
        for line in f:
            name = line.split("#", 1)[0].strip()
            for sep in ("==", ">=", "<=", "~=", ">", "<", "[", ";", " "):
                name = name.split(sep, 1)[0]
            if name:
                try:
                    metadata.version(name)
                except metadata.PackageNotFoundError:
                    missing.append(name)
    if missing:
        raise ImportError(
            f"Python requirements not installed in this environment: {', '.join(missing)} "
            f"(streamsql runs functions in this process: pip install -r {requirements_file_path})"
        )


def apply_python_dependencies(key: str, value: str) -> None:
    """PyFlink's dependency keys set in the configuration act as their methods do:
    `python.files` (comma-separated) as add_python_file, `python.archives`
    (`path[#target_dir]`, comma-separated) as add_python_archive, `python.requirements`
    (`path[#cache_dir]`) as set_python_requirements. Other keys: nothing."""
    from runtime.udf_options import ARCHIVES, FILES, REQUIREMENTS  # start-up: with the first python.* key set

    items = [v.strip() for v in value.split(",") if v.strip()]
    if key == FILES.key:
        for path in items:
            add_python_file(path)
    elif key == ARCHIVES.key:
        for item in items:
            path, _, target = item.partition("#")
            add_python_archive(path, target or None)
    elif key == REQUIREMENTS.key and value.strip():
        check_python_requirements(value.partition("#")[0].strip())


class CatalogApiMixin:
    """TableEnvironment methods for catalogs, databases, modules, functions and plans."""

    if TYPE_CHECKING:

        def execute_sql(self, stmt: str) -> TableResult: ...
        def _planner(self) -> Any: ...

    def _column(self, sql: str, index: int = 0) -> list[str]:
        return [str(r[index]) for r in self.execute_sql(sql).collect()]

    # ------------------------------------------------------------------ catalogs
    def create_catalog(self, catalog_name: str, catalog_descriptor: Any) -> None:
        """CREATE CATALOG from a CatalogDescriptor (its options, 'type' among them)."""
        options = (
            catalog_descriptor.get_options() if hasattr(catalog_descriptor, "get_options") else dict(catalog_descriptor)
        )
        with_ = ", ".join(f"'{k}' = '{str(v).replace(chr(39), chr(39) * 2)}'" for k, v in options.items())
        self.execute_sql(f"CREATE CATALOG {quote(catalog_name)} WITH ({with_})")

    def register_catalog(self, catalog_name: str, catalog: Any) -> None:
        """Register a catalog object made by `streamsql.catalog` (e.g. `JdbcCatalog(...)`;
        PyFlink's HiveCatalog is a Java class: use CREATE CATALOG with streamsql's catalog types)."""
        descriptor = getattr(catalog, "_descriptor", None)
        if descriptor is None:
            refuse(f"register_catalog({type(catalog).__name__})", JAVA)
        self.create_catalog(catalog_name, descriptor)

    def get_catalog(self, catalog_name: str) -> Any:
        from streamsql.catalog import Catalog

        if catalog_name not in self.list_catalogs():
            return None
        return Catalog(self, catalog_name)

    def use_catalog(self, catalog_name: str) -> None:
        self.execute_sql(f"USE CATALOG {quote(catalog_name)}")

    def use_database(self, database_name: str) -> None:
        self.execute_sql(f"USE {quote(database_name)}")

    def get_current_catalog(self) -> str:
        return self._column("SHOW CURRENT CATALOG")[0]

    def get_current_database(self) -> str:
        return self._column("SHOW CURRENT DATABASE")[0]

    def list_catalogs(self) -> list[str]:
        return self._column("SHOW CATALOGS")

    def list_databases(self) -> list[str]:
        return self._column("SHOW DATABASES")

    def list_functions(self) -> list[str]:
        return self._column("SHOW FUNCTIONS")

    def list_materialized_tables(self) -> list[str]:
        return self._column("SHOW MATERIALIZED TABLES")

    # ------------------------------------------------------------------ modules
    def load_module(self, module_name: str, module: Any = None) -> None:
        self.execute_sql(f"LOAD MODULE {quote(module_name)}")

    def unload_module(self, module_name: str) -> None:
        self.execute_sql(f"UNLOAD MODULE {quote(module_name)}")

    def use_modules(self, *module_names: str) -> None:
        self.execute_sql("USE MODULES " + ", ".join(quote(m) for m in module_names))

    def list_modules(self) -> list[str]:
        return self._column("SHOW MODULES")

    def list_full_modules(self) -> list[Any]:
        from streamsql.modes import ModuleEntry

        return [ModuleEntry(str(r[0]), bool(r[1])) for r in self.execute_sql("SHOW FULL MODULES").collect()]

    # ------------------------------------------------------------------ tables, views, functions
    def create_view(self, view_path: str, table: Table, ignore_if_exists: bool = False) -> None:
        ine = " IF NOT EXISTS" if ignore_if_exists else ""
        self.execute_sql(f"CREATE VIEW{ine} {_path_sql(view_path)} AS {table.to_sql()}")

    def drop_table(self, table_path: str, ignore_if_not_exists: bool = True) -> bool:
        return self._drop_permanent("TABLE", table_path, ignore_if_not_exists)

    def drop_view(self, view_path: str, ignore_if_not_exists: bool = True) -> bool:
        return self._drop_permanent("VIEW", view_path, ignore_if_not_exists)

    def drop_function(self, path: str) -> bool:
        return self._drop_permanent("FUNCTION", path, True)

    def _drop_permanent(self, kind: str, path: str, ignore_if_not_exists: bool) -> bool:
        from planner.errors import SqlError

        try:
            self.execute_sql(f"DROP {kind} {_path_sql(path)}")
        except SqlError:
            if ignore_if_not_exists:
                return False
            raise
        return True

    def from_descriptor(self, descriptor: TableDescriptor) -> Table:
        """A Table over an anonymous table described by `descriptor`."""
        name = f"__descriptor${id(descriptor)}"
        self.create_temporary_table(name, descriptor)  # type: ignore[attr-defined]
        return self.from_path(name)  # type: ignore[attr-defined,no-any-return]

    def create_java_function(self, path: str, function_class_name: str, ignore_if_exists: bool = False) -> None:
        refuse("create_java_function", JAVA)

    def create_java_temporary_function(self, path: str, function_class_name: str) -> None:
        refuse("create_java_temporary_function", JAVA)

    def create_java_temporary_system_function(self, name: str, function_class_name: str) -> None:
        refuse("create_java_temporary_system_function", JAVA)

    # ------------------------------------------------------------------ models
    # Models are catalog objects (CREATE MODEL in SQL, streamsql/models.py); PyFlink's
    # ModelDescriptor is a Java object, so creating one from Python goes through SQL.
    def create_model(self, model_path: str, model_descriptor: Any, ignore_if_exists: bool = False) -> None:
        refuse("create_model", "PyFlink's ModelDescriptor is a Java object; register the model with CREATE MODEL")

    def create_temporary_model(self, model_path: str, model_descriptor: Any, ignore_if_exists: bool = False) -> None:
        refuse(
            "create_temporary_model",
            "PyFlink's ModelDescriptor is a Java object; register the model with CREATE TEMPORARY MODEL",
        )

    def _drop_model(self, model_path: str, temporary: bool, ignore_if_not_exists: bool) -> bool:
        from planner.parse import parse_statement
        from streamsql.models import lookup

        kind = "TEMPORARY MODEL" if temporary else "MODEL"
        stmt = parse_statement(f"DROP {kind} IF EXISTS {model_path}")
        path = self.catalog.qualify(stmt.name)  # type: ignore[attr-defined]
        found = lookup(self, path)  # type: ignore[arg-type]
        exists = found is not None and found[1] == temporary
        if exists or not ignore_if_not_exists:
            self.execute_sql(f"DROP {kind} {model_path}")
        return exists

    def drop_model(self, model_path: str, ignore_if_not_exists: bool = True) -> bool:
        """DROP MODEL: True when a model was dropped."""
        return self._drop_model(model_path, False, ignore_if_not_exists)

    def drop_temporary_model(self, model_path: str) -> bool:
        """DROP TEMPORARY MODEL: True when a temporary model was dropped."""
        return self._drop_model(model_path, True, True)

    def list_models(self) -> list[str]:
        """The models of the current database, temporary ones included."""
        return self._column("SHOW MODELS")

    def list_temporary_models(self) -> list[str]:
        cat = self.catalog  # type: ignore[attr-defined]
        here = (cat.current_catalog, cat.current_database)
        return sorted(p[2] for p in cat.temporary_models if p[:2] == here)

    # ------------------------------------------------------------------ Python dependencies
    def add_python_file(self, file_path: str) -> None:
        add_python_file(file_path)

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        add_python_archive(archive_path, target_dir)

    def set_python_requirements(self, requirements_file_path: str, requirements_cache_dir: str | None = None) -> None:
        check_python_requirements(requirements_file_path)

    # ------------------------------------------------------------------ compiled plans
    def compile_plan_sql(self, stmt: str) -> CompiledPlan:
        """The JobGraph of an INSERT statement (or a STATEMENT SET), as a compiled plan."""
        from planner.statements import InsertInto, StatementSet
        from streamsql.pipeline import CompiledPlan

        statements = self.parse(stmt)  # type: ignore[attr-defined]
        if len(statements) != 1 or not isinstance(statements[0], (InsertInto, StatementSet)):
            from planner.errors import UnsupportedSqlError

            raise UnsupportedSqlError("compile_plan_sql() takes one INSERT statement or STATEMENT SET", sql=stmt)
        s = statements[0]
        inserts = list(s.inserts) if isinstance(s, StatementSet) else [s]
        return CompiledPlan(self, self._planner().plan_inserts(inserts))  # type: ignore[arg-type]

    def load_plan(self, plan_reference: PlanReference) -> CompiledPlan:
        return plan_reference.load(self)  # type: ignore[arg-type]

    def execute_plan(self, plan_reference: PlanReference) -> TableResult:
        return self.load_plan(plan_reference).execute()
