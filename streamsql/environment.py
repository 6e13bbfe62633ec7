"""TableEnvironment and EnvironmentSettings: the embedded entry point, shaped like PyFlink's.

One environment serves both modes; statements go parse → plan (planner) → run (runtime).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from planner.errors import SqlError, SqlValidationError, UnsupportedSqlError
from planner.statements import (
    CreateTable,
    CreateView,
    Describe,
    Drop,
    Explain,
    InsertInto,
    Query,
    ResetOption,
    SetOption,
    Show,
    Statement,
    StatementSet,
)
from runtime.checkpoint.options import JOB_ID
from runtime.config.core import QUERY_START_KEY, RUNTIME_MODE, TARGET, job_parallelism
from runtime.config.options import key
from runtime.errors import ConfigError
from runtime.pandas_interop import keep_pyarrow_from_pandas
from runtime.sink_constraints import enforce_not_null, not_null_action
from runtime.state.ttl import now_ms as processing_time_ms
from runtime.types import STRING, Field
from streamsql.config import TableConfig
from streamsql.rest.options import PORT as REST_PORT
from streamsql.result import JobHandle, ResultKind, TableResult
from streamsql.start_up import gc_paused
from streamsql.table_env_api import TableApiMixin, visible
from streamsql.table_env_catalog import CatalogApiMixin
from streamsql.unsupported import DATASTREAM, refuse

if TYPE_CHECKING:
    import pyarrow as pa

    from streamsql.common import Configuration
    from streamsql.table import Table

_job_ids = itertools.count(1)

BUILTIN_CATALOG = (
    key("table.builtin-catalog-name")
    .string_type()
    .default_value("default_catalog")
    .with_description("Name of the catalog the session starts in (PyFlink's EnvironmentSettings).")
)
BUILTIN_DATABASE = (
    key("table.builtin-database-name")
    .string_type()
    .default_value("default_database")
    .with_description("Name of the database the session starts in (PyFlink's EnvironmentSettings).")
)


class EnvironmentSettings:
    """Runtime mode and initial configuration of a TableEnvironment."""

    DEFAULT_BUILTIN_CATALOG = BUILTIN_CATALOG.get(None)
    DEFAULT_BUILTIN_DATABASE = BUILTIN_DATABASE.get(None)

    def __init__(self, mode: str = "streaming", configuration: dict[str, str] | None = None) -> None:
        self.mode = mode
        self.configuration = dict(configuration or {})

    @staticmethod
    def in_streaming_mode() -> EnvironmentSettings:
        return EnvironmentSettings("streaming")

    @staticmethod
    def in_batch_mode() -> EnvironmentSettings:
        return EnvironmentSettings("batch")

    @staticmethod
    def new_instance() -> EnvironmentSettings.Builder:
        return EnvironmentSettings.Builder()

    def is_streaming_mode(self) -> bool:
        return self.mode == "streaming"

    def get_built_in_catalog_name(self) -> str:
        return BUILTIN_CATALOG.get(self.configuration)

    def get_built_in_database_name(self) -> str:
        return BUILTIN_DATABASE.get(self.configuration)

    def get_configuration(self) -> Configuration:
        from streamsql.common import Configuration

        return Configuration.from_dict(self.to_configuration())

    def to_configuration(self) -> dict[str, str]:
        return {**self.configuration, RUNTIME_MODE.key: self.mode}

    class Builder:
        def __init__(self) -> None:
            self._mode = "streaming"
            self._conf: dict[str, str] = {}

        def in_streaming_mode(self) -> EnvironmentSettings.Builder:
            self._mode = "streaming"
            return self

        def in_batch_mode(self) -> EnvironmentSettings.Builder:
            self._mode = "batch"
            return self

        def with_built_in_catalog_name(self, built_in_catalog_name: str) -> EnvironmentSettings.Builder:
            self._conf[BUILTIN_CATALOG.key] = built_in_catalog_name
            return self

        def with_built_in_database_name(self, built_in_database_name: str) -> EnvironmentSettings.Builder:
            self._conf[BUILTIN_DATABASE.key] = built_in_database_name
            return self

        def with_configuration(self, config: Configuration | dict[str, str]) -> EnvironmentSettings.Builder:
            conf = config if isinstance(config, dict) else config.to_dict()
            self._conf.update(conf)
            if RUNTIME_MODE.is_set(conf):
                self._mode = RUNTIME_MODE.get(conf)
            return self

        def build(self) -> EnvironmentSettings:
            return EnvironmentSettings(self._mode, self._conf)


class TableEnvironment(TableApiMixin, CatalogApiMixin):
    """Runs Flink SQL in this process; the Table API methods come from TableApiMixin."""

    def __init__(self, settings: EnvironmentSettings | None = None) -> None:
        with gc_paused():  # the first environment loads the planner (streamsql/start_up.py)
            from planner.catalog import Catalog
            from streamsql.catalog_stores import open_store

            # pyarrow would import pandas (~0.3 s) at the session's first conversion of Python
            # values; pandas comes only with an `import pandas` or to_pandas()
            keep_pyarrow_from_pandas()
            settings = settings or EnvironmentSettings.in_streaming_mode()
            self._config = TableConfig(settings.to_configuration())
            self._catalog = Catalog(BUILTIN_CATALOG.get(self._config), BUILTIN_DATABASE.get(self._config))
            open_store(self._catalog, self._config)
            self.jobs: dict[str, JobHandle] = {}
            # Loaded modules in resolution order, with whether each is used (SHOW FULL MODULES).
            self.modules: list[tuple[str, bool]] = [("core", True)]

    @staticmethod
    def create(
        environment_settings: EnvironmentSettings | Configuration | dict[str, str] | None = None,
    ) -> TableEnvironment:
        """A TableEnvironment from EnvironmentSettings or a Configuration (PyFlink's two forms)."""
        settings = environment_settings
        if settings is not None and not isinstance(settings, EnvironmentSettings):
            settings = EnvironmentSettings.new_instance().with_configuration(settings).build()
        return TableEnvironment(settings)

    # ------------------------------------------------------------------ config
    def get_config(self) -> TableConfig:
        return self._config

    @property
    def is_streaming(self) -> bool:
        return RUNTIME_MODE.get(self._config) != "batch"

    @property
    def catalog(self) -> Any:
        return self._catalog

    def _planner(self) -> Any:
        from planner.api import Planner

        return Planner(self._catalog, self._config.to_dict())

    @property
    def runner(self) -> str:
        """`execution.target`: `local` (the embedded executor) or `spark` (docs/spark.md)."""
        return TARGET.get(self._config)

    def _executor(self, graph: Any, stop: threading.Event, stmt: Statement | None = None) -> Any:
        """The executor for the configured runner. The Spark runner checks the whole graph
        first, so an operator it cannot run is refused before the job starts. A BATCH job
        records its start: CURRENT_TIMESTAMP & co are evaluated once as the query starts
        (read from the processing-time clock, so a test's `set_clock` fixes them too)."""
        if not self.is_streaming:
            graph.config.setdefault(QUERY_START_KEY, str(processing_time_ms()))
        if self.runner == "spark":
            from runtime.executor.spark import SparkExecutor, SparkUnsupportedError

            try:
                return SparkExecutor(graph, stop_event=stop)
            except SparkUnsupportedError as e:
                raise UnsupportedSqlError(
                    f"the Spark runner cannot run this statement: {e}",
                    sql=stmt.sql if stmt else None,
                    line=1,
                    column=1,
                ) from None
        if _parallelism(graph) > 1:  # N worker processes (docs/parallel.md)
            from runtime.executor.parallel.executor import ParallelExecutor

            return ParallelExecutor(graph, stop_event=stop)
        from runtime.executor.local import LocalExecutor

        return LocalExecutor(graph, stop_event=stop)

    # ------------------------------------------------------------------ SQL
    def parse(self, sql: str) -> list[Statement]:
        from planner.parse import parse_script

        return parse_script(sql)

    def execute_sql(self, stmt: str) -> TableResult:
        """Run one statement (or a script: each in order; the last one's result returns)."""
        statements = self.parse(stmt)
        if not statements:
            return TableResult.ok()
        result = TableResult.ok()
        for statement in statements:
            result = self.execute_statement(statement)
            if statement is not statements[-1] and result.job is not None:
                result.wait()
        return result

    def sql_query(self, query: str) -> Table:
        from streamsql.table import Table

        statements = self.parse(query)
        if len(statements) != 1 or not isinstance(statements[0], Query):
            raise UnsupportedSqlError("sql_query() takes exactly one SELECT query", sql=query, line=1, column=1)
        table = Table(self, statements[0])
        table._fields()  # validated now, as PyFlink's sql_query does
        return table

    def explain_sql(self, stmt: str, *extra_details: Any) -> str:
        sql = stmt
        details = tuple(str(getattr(d, "name", d)) for d in extra_details)
        statements = self.parse(sql)
        if len(statements) != 1:
            raise UnsupportedSqlError("explain_sql() takes exactly one statement", sql=sql, line=1, column=1)
        parsed = statements[0]
        if not isinstance(parsed, Explain):
            if not isinstance(parsed, (Query, InsertInto, StatementSet)):
                raise UnsupportedSqlError(
                    "only queries and INSERT statements can be explained", sql=sql, line=1, column=1
                )
            parsed = Explain(
                parsed, tuple(d.upper() for d in details), sql=parsed.sql, line=parsed.line, column=parsed.column
            )
        explain = parsed
        return self._with_source(explain, lambda: self._planner().explain(explain))

    def execute_statement(self, stmt: Statement) -> TableResult:
        return self._with_source(stmt, lambda: self._execute(stmt))

    def _with_source(self, stmt: Statement, fn: Any) -> Any:
        try:
            return fn()
        except SqlError as e:
            if e.sql is None:
                e.sql = stmt.sql
            if e.statement_line is None:
                e.statement_line = stmt.line
            raise

    def _execute(self, stmt: Statement) -> TableResult:
        # First the statements that need none of the other statements' modules (start-up: a
        # query, SET / RESET, the Table API's CREATE TEMPORARY TABLE of from_elements).
        if isinstance(stmt, Query):
            return self._run_query(stmt)
        if isinstance(stmt, CreateTable):
            if stmt.as_query is not None:
                return self._create_table_as(stmt)
            if stmt.or_replace:
                raise UnsupportedSqlError(
                    "[CREATE OR] REPLACE TABLE needs AS SELECT (REPLACE TABLE AS SELECT)",
                    sql=stmt.sql,
                    line=1,
                    column=1,
                )
            self._catalog.create_table(stmt)
            return TableResult.ok()
        if isinstance(stmt, CreateView):
            self._catalog.create_view(stmt)
            return TableResult.ok()
        if isinstance(stmt, SetOption):
            if stmt.key is None:  # as Flink's client: the keys set in this session, not every default
                rows = sorted(self._config.explicit().items())
                return TableResult.of_rows((Field("key", STRING()), Field("value", STRING())), rows)
            try:
                self._config.set(stmt.key, stmt.value or "")
            except ConfigError as e:
                raise _set_error(stmt, e) from None
            return TableResult.ok()
        if isinstance(stmt, ResetOption):
            self._config.reset(stmt.key)
            return TableResult.ok()
        from streamsql import catalog_statements

        handler = catalog_statements.HANDLERS.get(type(stmt))
        if handler is not None:
            return handler(self, stmt)
        from planner.statements_dml import Delete, Update
        from planner.statements_materialized import (
            AlterMaterializedTable,
            CreateMaterializedTable,
            DropMaterializedTable,
        )
        from streamsql import materialized_tables, row_level

        if isinstance(stmt, CreateMaterializedTable):
            return materialized_tables.create(self, stmt)
        if isinstance(stmt, AlterMaterializedTable):
            return materialized_tables.alter(self, stmt)
        if isinstance(stmt, DropMaterializedTable):
            return materialized_tables.drop(self, stmt)
        if isinstance(stmt, (Delete, Update)):
            return row_level.run(self, stmt)
        if isinstance(stmt, Drop):
            self._catalog.drop(stmt)
            return TableResult.ok()
        from planner.statements_functions import CreateFunction, DropFunction  # UDFs (docs/udf.md)

        if isinstance(stmt, CreateFunction):
            self._functions().create_from_statement(stmt)
            return TableResult.ok()
        if isinstance(stmt, DropFunction):
            self._functions().drop_path(tuple(stmt.name), stmt.temporary, stmt.system, stmt.if_exists)
            return TableResult.ok()
        from planner.statements_functions import DescribeFunction

        if isinstance(stmt, DescribeFunction):
            return catalog_statements.describe_function(self, stmt)
        if isinstance(stmt, InsertInto):
            return self._run_inserts([stmt])
        if isinstance(stmt, StatementSet):
            return self._run_inserts(list(stmt.inserts))
        if isinstance(stmt, Explain):
            text = self._planner().explain(stmt)
            return TableResult.of_rows((Field("result", STRING()),), [(text,)])
        if isinstance(stmt, Show):
            return self._show(stmt)
        if isinstance(stmt, Describe):
            return self._describe(stmt)
        raise UnsupportedSqlError(f"statement not supported yet: {type(stmt).__name__}", sql=stmt.sql, line=1, column=1)

    # ------------------------------------------------------------------ running
    def _run_query(self, stmt: Query) -> TableResult:
        planned = self._planner().plan_query(stmt)
        stop = threading.Event()
        running: list[Any] = []  # the executor, once started: its watermark feeds the shell

        query_id = f"query-{next(_job_ids):026x}"
        graph = dataclasses.replace(planned.graph, config={**(planned.graph.config or {}), JOB_ID.key: query_id})

        executor = self._executor(graph, stop, stmt)  # the Spark runner refuses here, before running

        # Flink's collect sink enforces NOT NULL result columns too (runtime.sink_constraints).
        not_null = {i: f.name for i, f in enumerate(planned.schema) if not f.type.nullable}
        action = not_null_action(graph.config)

        def batches() -> Iterator[pa.RecordBatch]:
            running.append(executor)
            if not not_null:
                yield from executor.run()
                return
            for batch in executor.run():
                yield enforce_not_null(batch, not_null, action)

        def watermark() -> int | None:
            return running[0].current_watermark if running else None

        return TableResult(
            tuple(planned.schema),
            batches,
            streaming=self.is_streaming,
            time_zone=self._config.get_local_timezone(),
            changelog_mode=planned.changelog_mode,
            stop_event=stop,
            watermark=watermark,
            executor=lambda: running[0] if running else None,
        )

    def _run_inserts(self, inserts: list[InsertInto], planner: Any = None, name: str | None = None) -> TableResult:
        """Plan and submit INSERTs as one job (`planner`: one with other settings, e.g. a
        materialized table's refresh job; `name`: the job's name)."""
        graph = (planner or self._planner()).plan_inserts(inserts)
        if self.runner == "spark":  # refuse an unsupported job before it starts
            self._executor(graph, threading.Event(), inserts[0])
        # INSERT OVERWRITE: what the new rows replace is removed once the job has succeeded.
        on_success = [self._prepare_overwrite(i) for i in inserts if i.overwrite]
        # Flink names an INSERT job after its sink tables.
        name = name or "insert-into_" + ",".join(".".join(self._catalog.qualify(i.table)) for i in inserts)
        return self.submit_job_graph(graph, name, on_success=on_success)

    def _prepare_overwrite(self, insert: InsertInto) -> Any:
        from planner.catalog_objects import CatalogTable
        from runtime.connectors.base import get_connector
        from runtime.connectors.filesystem_partitions import PARTITION_KEYS

        table = self._catalog.lookup(insert.table, None, insert.sql)
        assert isinstance(table, CatalogTable)  # the binder refused a view
        prepare = get_connector(table.connector).prepare_overwrite
        assert prepare is not None  # the binder refused the statement otherwise
        options = dict(table.options)
        if table.partitioned_by:
            options[PARTITION_KEYS] = ",".join(table.partitioned_by)
        static = {k: str(v.this) if isinstance(v, exp.Literal) else v.sql() for k, v in insert.partition}
        return prepare(options, static)

    def submit_job_graph(self, graph: Any, name: str, on_success: list[Any] | None = None) -> TableResult:
        """Run a planned JobGraph as a job (an INSERT's, or a compiled plan's) in the background;
        `on_success` functions run after the job has finished without failing or being stopped."""
        job_id = f"{next(_job_ids):032x}"
        # Checkpoints of this job live under <execution.checkpointing.dir>/<job id>/ (job ids
        # count from 1 in each session, so re-running a script finds its checkpoints).
        graph = dataclasses.replace(graph, config={**(graph.config or {}), JOB_ID.key: job_id})
        executors: list[Any] = []

        def run(stop: threading.Event) -> None:
            executor = self._executor(graph, stop)
            executors.append(executor)
            for _ in executor.run():
                pass
            if not stop.is_set():
                for fn in on_success or ():
                    fn()

        # every source scan bounded (only TableSourceScanParams has `bounded`; duck-typed so
        # the CLI's start-up does not import the source operator module)
        bounded = all(getattr(n.params, "bounded", True) for n in graph.nodes)
        handle = JobHandle(
            job_id, run, name=name, executor=lambda: executors[0] if executors else None, bounded=bounded
        )
        self.jobs[job_id] = handle
        if REST_PORT.is_set(self._config):  # REST API + dashboard (streamsql/rest, docs/rest.md)
            from streamsql.rest.server import serve_session

            serve_session(self, handle)
        return TableResult(
            (Field("job id", STRING()),),
            lambda: iter(()),
            kind=ResultKind.SUCCESS_WITH_CONTENT,
            job=handle,
            stop_event=handle.stop_event,
        )

    def _show(self, stmt: Show) -> TableResult:
        from streamsql import catalog_statements

        what = stmt.what.upper()
        result = catalog_statements.show(self, stmt)
        if result is not None:
            return result
        if what in ("FUNCTIONS", "USER FUNCTIONS"):
            return catalog_statements.show_functions(self, stmt)
        if what == "JOBS":
            return self.job_rows(list(self.jobs.items()))
        raise UnsupportedSqlError(f"SHOW {stmt.what} is not supported", sql=stmt.sql, line=1, column=1)

    def job_rows(self, jobs: list[tuple[str, JobHandle]]) -> TableResult:
        """SHOW JOBS / DESCRIBE JOB rows: job id, job name, status, start time."""
        rows = [(jid, h.name, h.get_job_status(), _iso(h.start_time)) for jid, h in jobs]
        fields = (
            Field("job id", STRING()),
            Field("job name", STRING()),
            Field("status", STRING()),
            Field("start time", STRING()),
        )
        return TableResult.of_rows(fields, rows)

    def _describe(self, stmt: Describe) -> TableResult:
        from streamsql import catalog_statements

        return catalog_statements.describe(self, stmt)

    def _create_table_as(self, stmt: CreateTable) -> TableResult:
        """[CREATE OR] REPLACE TABLE / CREATE TABLE t [(...)] WITH (...) AS query (CTAS /
        RTAS): the table with the columns the planner merges from the two parts
        (planner/table_as.py), then an INSERT job that fills it, by column name."""
        insert = self._table_as_insert(stmt)
        return TableResult.ok() if insert is None else self._run_inserts([insert])

    @staticmethod
    def in_statement_set(stmt: object) -> bool:
        """Whether the SQL client's `BEGIN STATEMENT SET;` takes `stmt`: an INSERT or a
        CREATE TABLE ... AS (Flink's gateway: "Only 'INSERT/CREATE TABLE AS' statement is
        allowed in Statement Set"); not [CREATE OR] REPLACE TABLE ... AS."""
        if isinstance(stmt, InsertInto):
            return True
        return (
            isinstance(stmt, CreateTable) and stmt.as_query is not None and not (stmt.or_replace or stmt.replace_only)
        )

    def statement_set_inserts(self, items: Sequence[InsertInto | CreateTable]) -> list[InsertInto]:
        """The INSERTs of a statement set whose items may be CTAS / RTAS (the Table API's
        `StatementSet.add_insert_sql`, the SQL client's `BEGIN STATEMENT SET;`): as Flink's
        executeInternal does, each CTAS creates its table now (not atomically) and gives the
        INSERT that fills it; the caller plans all of them as one job."""
        inserts: list[InsertInto] = []
        for item in items:
            if isinstance(item, CreateTable):
                insert = self._table_as_insert(item)
                if insert is not None:
                    inserts.append(insert)
            else:
                inserts.append(item)
        return inserts

    def _table_as_insert(self, stmt: CreateTable) -> InsertInto | None:
        """Create a CTAS / RTAS statement's table; the INSERT that fills it (None: IF NOT
        EXISTS and the table exists, nothing to do)."""
        from planner.catalog_objects import quoted
        from planner.table_as import merge_table_as

        if stmt.temporary:
            raise UnsupportedSqlError(
                "CREATE TEMPORARY TABLE ... AS SELECT is not supported", sql=stmt.sql, line=1, column=1
            )
        assert stmt.as_query is not None
        fields = self._planner().bind(Query(query=stmt.as_query, sql=stmt.sql)).fields
        names = [f.name for f in fields]
        columns = merge_table_as(stmt, fields)
        path = self._catalog.qualify(stmt.name, stmt.sql)
        exists = self._catalog.get_path(path) is not None
        if stmt.replace_only and not exists:
            raise SqlValidationError(
                f"The table {quoted(path)} to be replaced doesn't exist. You can try to use CREATE TABLE AS "
                "statement or CREATE OR REPLACE TABLE AS statement.",
                sql=stmt.sql,
                line=1,
                column=1,
            )
        if stmt.if_not_exists and exists and not stmt.or_replace:
            return None
        create = dataclasses.replace(stmt, columns=columns, as_query=None, or_replace=False)
        # As Flink's non-atomic CTAS / RTAS: the table is created first, then the INSERT is
        # planned and run; a failure of either leaves the table (e.g. a distributed table no
        # connector can write).
        if stmt.or_replace and exists:
            self._catalog.drop(Drop(kind="TABLE", name=path, if_exists=True, sql=stmt.sql))
        self._catalog.create_table(create)
        return InsertInto(
            table=path,
            query=stmt.as_query,
            columns=tuple(names),
            sql=stmt.sql,
            line=stmt.line,
            column=stmt.column,
        )

    # ------------------------------------------------------------------ catalog helpers
    def list_tables(self) -> list[str]:
        return visible(list(self._catalog.list_tables()))

    def list_views(self) -> list[str]:
        return visible(list(self._catalog.list_views()))

    # ------------------------------------------------------------------ user-defined functions
    def _functions(self) -> Any:
        from planner.functions_catalog import functions_of

        return functions_of(self._catalog)

    def create_temporary_function(self, path: str, function: Any) -> None:
        """Register a Python UDF (made with streamsql.udf.udf / udtf / udaf) under `path`;
        replaces a temporary function of the same name. See docs/udf.md. A bare
        AggregateFunction / TableAggregateFunction object is wrapped by its own types."""
        from streamsql.udf import wrap_function_object

        self._functions().create(path.split(".")[-1], wrap_function_object(function), temporary=True)

    def create_temporary_system_function(self, name: str, function: Any) -> None:
        """Like create_temporary_function, but shadows built-in functions of the same name."""
        from streamsql.udf import wrap_function_object

        self._functions().create(name, wrap_function_object(function), temporary=True, system=True)

    def drop_temporary_function(self, path: str) -> bool:
        return bool(self._functions().drop(path.split(".")[-1], temporary=True, if_exists=True))

    def drop_temporary_system_function(self, name: str) -> bool:
        return bool(self._functions().drop(name, temporary=True, system=True, if_exists=True))

    def list_user_defined_functions(self) -> list[str]:
        return list(self._functions().names())


def _iso(epoch_s: float) -> str:
    """A job's start time as Flink's SHOW JOBS prints it (ISO-8601, UTC)."""
    import datetime

    return datetime.datetime.fromtimestamp(epoch_s, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _parallelism(graph: Any) -> int:
    """The parallelism of a job graph (`table.exec.resource.default-parallelism`, else
    `parallelism.default`)."""
    return job_parallelism(getattr(graph, "config", None))


def _set_error(stmt: SetOption, error: ConfigError) -> SqlValidationError:
    """A `SET` value its key's declaration refuses, positioned at the value in the statement."""
    sql = stmt.sql or ""
    at = sql.rfind(f"'{stmt.value}'") if stmt.value is not None else -1
    line = column = None
    if at >= 0:
        line = sql.count("\n", 0, at) + 1
        column = at - (sql.rfind("\n", 0, at) + 1) + 1
    return SqlValidationError(str(error), sql or None, line, column)


class StreamTableEnvironment(TableEnvironment):
    """PyFlink's StreamTableEnvironment: a streaming TableEnvironment. `create(env)` takes
    the settings of a `streamsql.datastream.StreamExecutionEnvironment`; the DataStream
    conversions need PyFlink's DataStream API and raise JvmRequiredError."""

    @staticmethod
    def create(  # type: ignore[override]
        stream_execution_environment: Any = None,
        environment_settings: EnvironmentSettings | None = None,
    ) -> StreamTableEnvironment:
        conf: dict[str, str] = {}
        if stream_execution_environment is not None:
            conf.update(stream_execution_environment.to_configuration())
        settings = environment_settings or EnvironmentSettings.in_streaming_mode()
        merged = {**settings.to_configuration(), **conf}
        return StreamTableEnvironment(EnvironmentSettings(RUNTIME_MODE.get(merged), merged))

    def from_data_stream(self, data_stream: Any, *fields_or_schema: Any) -> Table:
        refuse("StreamTableEnvironment.from_data_stream", DATASTREAM)

    def from_changelog_stream(self, data_stream: Any, schema: Any = None, changelog_mode: Any = None) -> Table:
        refuse("StreamTableEnvironment.from_changelog_stream", DATASTREAM)

    def to_data_stream(self, table: Table) -> Any:
        refuse("StreamTableEnvironment.to_data_stream", DATASTREAM)

    def to_changelog_stream(self, table: Table, target_schema: Any = None, changelog_mode: Any = None) -> Any:
        refuse("StreamTableEnvironment.to_changelog_stream", DATASTREAM)

    def to_append_stream(self, table: Table, type_info: Any) -> Any:
        refuse("StreamTableEnvironment.to_append_stream", DATASTREAM)

    def to_retract_stream(self, table: Table, type_info: Any) -> Any:
        refuse("StreamTableEnvironment.to_retract_stream", DATASTREAM)
