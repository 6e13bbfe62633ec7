"""Materialized tables in a session: CREATE [OR ALTER] / ALTER / DROP MATERIALIZED TABLE.

A materialized table is a table of the catalog (`planner.catalog_objects.CatalogTable` with a
`MaterializedDefinition`: its query, freshness and refresh mode) plus a refresh pipeline
that this session runs, as Flink's SQL gateway does (its MaterializedTableManager):

- CONTINUOUS: a streaming `INSERT INTO t <query>` job named
  `Materialized_table_<path>_continuous_refresh_job`, checkpointing every `FRESHNESS`
  (unless `execution.checkpointing.interval` is set). SUSPEND stops it with a savepoint
  (`execution.checkpointing.savepoint-dir` must be set, as in Flink); RESUME starts it
  again from that savepoint.
- FULL: a periodic batch `INSERT OVERWRITE t SELECT * FROM (<query>)` run by a workflow
  scheduler every `FRESHNESS`, aligned to the clock as Flink's cron schedule is. Flink's
  gateway needs `workflow-scheduler.type`; so does streamsql: 'embedded' runs the schedule
  in this process (Flink's embedded scheduler is the same idea). Unset: Flink's error.
- REFRESH [PARTITION (...)]: one batch INSERT OVERWRITE job, answered with its job id.

The refresh pipeline lives as long as the session. A materialized table read back from a
persistent catalog by another session starts SUSPENDED there: RESUME starts its pipeline.

The refresh mode follows Flink: REFRESH_MODE if given, else CONTINUOUS when the freshness
is below `materialized-table.refresh-mode.freshness-threshold`, else FULL; an omitted
freshness defaults to `materialized-table.default-freshness.continuous` / `.full`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from planner.binder.types import implicitly_castable
from planner.catalog_alter import changed_definition
from planner.catalog_objects import CatalogTable, MaterializedDefinition, quoted
from planner.catalog_store import CatalogError
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.statements import ColumnDef, InsertInto, Query
from planner.statements_materialized import (
    AlterMaterializedTable,
    CreateMaterializedTable,
    DropMaterializedTable,
    Freshness,
)
from runtime.checkpoint.options import CHECKPOINTING_INTERVAL, SAVEPOINT_DIR, SAVEPOINT_PATH
from runtime.config.core import RUNTIME_MODE, TARGET
from runtime.frozen import mutable_dataclass
from runtime.types import MAP, STRING, DataType, Field
from streamsql.materialized_options import (
    DEFAULT_FRESHNESS_CONTINUOUS,
    DEFAULT_FRESHNESS_FULL,
    FRESHNESS_THRESHOLD,
    PARTITION_DATE_FORMATTER,
    WORKFLOW_SCHEDULER,
)
from streamsql.result import TableResult

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment
    from streamsql.result import JobHandle

SQL_EXECUTION_EXCEPTION = "org.apache.flink.table.gateway.service.utils.SqlExecutionException"
VALIDATION_EXCEPTION = "org.apache.flink.table.api.ValidationException"

_UNITS_MS = (("DAY", 86_400_000), ("HOUR", 3_600_000), ("MINUTE", 60_000), ("SECOND", 1000))
# FULL mode: the freshness must fit a cron schedule (Flink's IntervalFreshness checks).
_CRON_FACTORS = {"SECOND": 60, "MINUTE": 60, "HOUR": 24, "DAY": 1}


def _error(stmt: Any, message: str, flink_class: str = SQL_EXECUTION_EXCEPTION) -> SqlValidationError:
    return CatalogError(message, flink_class, sql=stmt.sql, line=1, column=1)


# ---------------------------------------------------------------------- refresh pipelines
@mutable_dataclass
class Pipeline:
    """A materialized table's refresh pipeline in this session."""

    status: str = "SUSPENDED"  # ACTIVATED | SUSPENDED
    job: JobHandle | None = None  # CONTINUOUS: the refresh job
    savepoint: str | None = None  # CONTINUOUS: where SUSPEND left the job
    schedule: _Schedule | None = None  # FULL: the periodic refresh
    # RESUME WITH (...): the refresh jobs' dynamic table options until the next SUSPEND
    # (Flink keeps them with the running pipeline only, never in the catalog).
    dynamic_options: dict[str, str] = field(default_factory=dict)


@mutable_dataclass
class _Schedule:
    """The embedded workflow scheduler of one FULL materialized table: a thread that runs a
    batch refresh at every multiple of the freshness (Flink's cron schedule)."""

    env: TableEnvironment
    path: tuple[str, str, str]
    stop: threading.Event = field(default_factory=threading.Event)
    runs: int = 0
    last_error: BaseException | None = None

    def start(self) -> None:
        threading.Thread(target=self._loop, name=f"refresh-{'.'.join(self.path)}", daemon=True).start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            table = self.env.catalog.get_path(self.path)
            if not isinstance(table, CatalogTable) or table.materialized is None:
                return
            period = table.materialized.freshness.millis / 1000
            now = time.time()
            if self.stop.wait((now // period + 1) * period - now):
                return
            try:
                partition = scheduled_partition(self.env, table, (now // period + 1) * period)
                options = _pipeline(self.env, self.path).dynamic_options
                refresh(self.env, table, partition, "periodic", options).wait()
                self.runs += 1
            except Exception as e:  # noqa: BLE001 - a failed run is kept; the schedule goes on
                self.last_error = e


def date_formatters(options: dict[str, str]) -> dict[str, str]:
    """`partition.fields.<column>.date-formatter` options (PARTITION_DATE_FORMATTER): column
    -> Java date pattern."""
    prefix, suffix = PARTITION_DATE_FORMATTER.key.split("#")
    return {k[len(prefix) : -len(suffix)]: v for k, v in options.items() if PARTITION_DATE_FORMATTER.matches(k)}


def scheduled_partition(env: TableEnvironment, table: CatalogTable, schedule_s: float) -> tuple[tuple[str, str], ...]:
    """The partition a periodic refresh scheduled at `schedule_s` (epoch seconds) refreshes,
    as Flink computes it: each formatted partition column gets the schedule time minus the
    freshness, in the session time zone, in its pattern. None formatted: the whole table."""
    import zoneinfo
    from datetime import UTC, datetime

    import numpy as np

    from runtime.functions.datetime_patterns import format_wall

    m = table.materialized
    assert m is not None
    zone = env.get_config().get_local_timezone()
    offset = zoneinfo.ZoneInfo(zone).utcoffset(datetime.fromtimestamp(schedule_s, tz=UTC))
    wall_ms = int(schedule_s * 1000) + int(offset.total_seconds() * 1000 if offset else 0) - m.freshness.millis
    out = []
    for column, pattern in sorted(date_formatters(table.options).items()):
        value = format_wall(np.array([wall_ms], dtype=np.int64), np.array([True]), pattern).to_pylist()[0]
        out.append((column, str(value)))
    return tuple(out)


def _check_date_formatters(stmt: Any, table: CatalogTable) -> None:
    """Flink's checks of `partition.fields.#.date-formatter` when the table is created."""
    types = {c.name: c.type for c in table.columns}
    for column in date_formatters(table.options):
        key = f"partition.fields.{column}.date-formatter"
        if column not in table.partitioned_by:
            known = ", ".join(f"'{p}'" for p in table.partitioned_by) or "''"
            raise _error(
                stmt,
                f"Column '{column}' referenced by materialized table option '{key}' isn't a partition column. "
                f"Available partition columns: [{known}].",
                VALIDATION_EXCEPTION,
            )
        t = types[column]
        if t.name not in ("CHAR", "VARCHAR"):
            raise _error(
                stmt,
                f"Materialized table option '{key}' only supports referring to char, varchar and string type "
                f"partition column. Column `{column}` type is {t.with_nullable(True)}.",
                VALIDATION_EXCEPTION,
            )


def pipelines(env: TableEnvironment) -> dict[tuple[str, str, str], Pipeline]:
    found: dict[tuple[str, str, str], Pipeline] | None = getattr(env, "_materialized_pipelines", None)
    if found is None:
        found = {}
        env._materialized_pipelines = found  # type: ignore[attr-defined]
    return found


def _pipeline(env: TableEnvironment, path: tuple[str, str, str]) -> Pipeline:
    return pipelines(env).setdefault(path, Pipeline())


def _job_name(path: tuple[str, str, str], kind: str) -> str:
    return f"Materialized_table_{quoted(path)}_{kind}_refresh_job"


def _query_columns(env: TableEnvironment, query: exp.Expression, sql: str) -> tuple[str, ...]:
    return tuple(f.name for f in env._planner().bind(Query(query=query, sql=sql)).fields)  # noqa: SLF001


def _start_continuous(
    env: TableEnvironment, table: CatalogTable, restore: str | None, options: dict[str, str] | None = None
) -> JobHandle:
    from planner.api import Planner

    m = table.materialized
    assert m is not None
    conf = {**env.get_config().to_dict(), RUNTIME_MODE.key: "streaming"}
    if not CHECKPOINTING_INTERVAL.is_set(env.get_config()):  # Flink: the freshness is the interval
        conf[CHECKPOINTING_INTERVAL.key] = f"{m.freshness.millis} ms"
    conf.pop(SAVEPOINT_PATH.key, None)
    if restore:
        conf[SAVEPOINT_PATH.key] = restore
    sql = f"INSERT INTO {quoted(table.path)}\n{m.query.sql(dialect='flink', identify=True)}"
    insert = InsertInto(
        table=table.path,
        query=m.query,
        columns=_query_columns(env, m.query, sql),
        sink_options=dict(options or {}),
        sql=sql,
    )
    result = env._run_inserts([insert], planner=Planner(env.catalog, conf), name=_job_name(table.path, "continuous"))  # noqa: SLF001
    assert result.job is not None
    pipeline = _pipeline(env, table.path)
    pipeline.job, pipeline.status, pipeline.savepoint = result.job, "ACTIVATED", None
    pipeline.dynamic_options = dict(options or {})
    return result.job


def refresh(
    env: TableEnvironment,
    table: CatalogTable,
    partition: tuple[tuple[str, str], ...],
    kind: str = "one_time",
    options: dict[str, str] | None = None,
) -> JobHandle:
    """One batch refresh: INSERT OVERWRITE t SELECT * FROM (<query>) [WHERE k = 'v' AND ...]."""
    from planner.api import Planner

    m = table.materialized
    assert m is not None
    body = exp.select("*").from_(exp.Subquery(this=m.query.copy(), alias=exp.TableAlias(this=exp.to_identifier("q"))))
    for k, v in partition:
        body = body.where(exp.EQ(this=exp.column(k, quoted=True), expression=exp.Literal.string(v)))
    sql = f"INSERT OVERWRITE {quoted(table.path)}\n  {body.sql(dialect='flink', identify=True)}"
    insert = InsertInto(
        table=table.path,
        query=body,
        columns=_query_columns(env, body, sql),
        overwrite=True,
        sink_options=dict(options or {}),
        sql=sql,
    )
    conf = {**env.get_config().to_dict(), RUNTIME_MODE.key: "batch"}
    result = env._run_inserts([insert], planner=Planner(env.catalog, conf), name=_job_name(table.path, kind))  # noqa: SLF001
    assert result.job is not None
    return result.job


# ---------------------------------------------------------------------- freshness
def _freshness_of_ms(ms: int) -> Freshness:
    for unit, size in _UNITS_MS:
        if ms % size == 0:
            return Freshness(str(ms // size), unit)
    return Freshness(str(max(ms // 1000, 1)), "SECOND")


def _check_freshness(stmt: Any, freshness: Freshness) -> None:
    if freshness.negative or freshness.text.strip().startswith("-"):
        raise _error(stmt, "Materialized table freshness doesn't support negative value.", VALIDATION_EXCEPTION)
    if freshness.base_unit is None:
        raise _error(
            stmt,
            "Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit.",
            VALIDATION_EXCEPTION,
        )
    # Flink's IntervalFreshness: the literal must parse as a positive Java int.
    invalid = _error(
        stmt,
        f"The freshness interval currently only supports positive integer type values. But was: {freshness.text}",
        VALIDATION_EXCEPTION,
    )
    try:
        value = freshness.interval
    except ValueError:
        raise invalid from None
    if not 0 < value <= 2**31 - 1:
        raise invalid


def _check_full_freshness(stmt: Any, freshness: Freshness) -> None:
    unit = freshness.base_unit
    assert unit is not None
    factor = _CRON_FACTORS[unit]
    if factor % freshness.interval != 0:
        if unit == "DAY":
            message = "In full refresh mode, freshness must be 1 when the time unit is DAY."
        else:
            message = (
                f"In full refresh mode, only freshness that are factors of {factor} are currently supported when "
                f"the time unit is {unit}."
            )
        raise _error(stmt, message, VALIDATION_EXCEPTION)


def resolve_refresh(env: TableEnvironment, stmt: CreateMaterializedTable) -> tuple[Freshness, str]:
    """The freshness and refresh mode of a new materialized table, as Flink derives them."""
    conf = env.get_config()
    freshness = stmt.freshness
    if freshness is not None:
        _check_freshness(stmt, freshness)
    mode = stmt.refresh_mode
    if mode is None:
        threshold = FRESHNESS_THRESHOLD.get(conf)
        mode = "CONTINUOUS" if freshness is None or freshness.millis < threshold else "FULL"
    if freshness is None:
        default = DEFAULT_FRESHNESS_FULL if mode == "FULL" else DEFAULT_FRESHNESS_CONTINUOUS
        freshness = _freshness_of_ms(int(default.get(conf)))
    if mode == "FULL":
        _check_full_freshness(stmt, freshness)
    return Freshness(str(freshness.interval), freshness.base_unit or "SECOND"), mode


# ---------------------------------------------------------------------- statements
def _materialized(env: TableEnvironment, stmt: Any, name: tuple[str, ...]) -> CatalogTable:
    path = env.catalog.qualify(name, stmt.sql)
    table = env.catalog.get_path(path)
    if table is None:
        raise _error(stmt, f"Table {quoted(path)} does not exist.", VALIDATION_EXCEPTION)
    if not isinstance(table, CatalogTable) or table.materialized is None:
        raise _error(
            stmt,
            f"Table {quoted(path)} is not a materialized table, does not support materialized table related operation.",
            VALIDATION_EXCEPTION,
        )
    return table


def create(env: TableEnvironment, stmt: CreateMaterializedTable) -> TableResult:
    cat = env.catalog
    path = cat.qualify(stmt.name, stmt.sql)
    existing = cat.get_path(path)
    if stmt.or_alter and existing is not None:
        if not isinstance(existing, CatalogTable) or existing.materialized is None:
            # Flink names the table in its summary form here (no backticks)
            raise _error(
                stmt,
                f"Table {'.'.join(path)} is not a materialized table. Only materialized table support create or "
                "alter operation.",
                VALIDATION_EXCEPTION,
            )
        return _alter_query(env, stmt, existing, stmt.query)
    freshness, mode = resolve_refresh(env, stmt)
    if mode == "FULL" and not WORKFLOW_SCHEDULER.is_set(env.get_config()):
        raise _error(
            stmt, "The workflow scheduler must be configured when creating materialized table in full refresh mode."
        )
    table = cat.resolve_materialized_table(stmt, path, freshness, mode)
    _check_date_formatters(stmt, table)
    cat.store_object(table, stmt=stmt)
    if mode == "CONTINUOUS":
        try:
            _start_continuous(env, table, None)
        except Exception:
            # Flink drops the table when its refresh job cannot be submitted.
            cat.catalogs[path[0]].remove(path[1], path[2])
            pipelines(env).pop(path, None)
            raise
    else:
        _start_schedule(env, path)
    return TableResult.ok()


def _start_schedule(env: TableEnvironment, path: tuple[str, str, str]) -> None:
    pipeline = _pipeline(env, path)
    pipeline.schedule = _Schedule(env, path)
    pipeline.schedule.start()
    pipeline.status = "ACTIVATED"


def _stop_job(stmt: Any, env: TableEnvironment, table: CatalogTable, pipeline: Pipeline) -> None:
    """Stop a CONTINUOUS refresh job with a savepoint (Flink's SUSPEND)."""
    directory = SAVEPOINT_DIR.get(env.get_config())
    if not directory:
        raise _error(
            stmt, "Savepoint directory is not configured, can't stop job with savepoint.", VALIDATION_EXCEPTION
        )
    job = pipeline.job
    pipeline.savepoint = None
    if job is not None and job.is_running():
        try:
            pipeline.savepoint = job.stop_with_savepoint(directory)
        except Exception as e:  # noqa: BLE001 - reported as Flink reports it
            raise _error(
                stmt,
                f"Failed to suspend the continuous refresh job for materialized table {quoted(table.path)}.",
            ) from e
    pipeline.status = "SUSPENDED"


def _cancel(pipeline: Pipeline) -> None:
    if pipeline.job is not None and pipeline.job.is_running():
        pipeline.job.cancel()
        pipeline.job.join(30)
    if pipeline.schedule is not None:
        pipeline.schedule.stop.set()
        pipeline.schedule = None


def alter(env: TableEnvironment, stmt: AlterMaterializedTable) -> TableResult:
    table = _materialized(env, stmt, stmt.name)
    m = table.materialized
    assert m is not None
    pipeline = _pipeline(env, table.path)
    shown = quoted(table.path)
    if stmt.action == "SUSPEND":
        if m.refresh_mode == "CONTINUOUS":
            if pipeline.status == "SUSPENDED":
                job_id = pipeline.job.job_id if pipeline.job else "null"
                raise _error(
                    stmt, f"Materialized table {shown} continuous refresh job has been suspended, jobId is {job_id}."
                )
            _stop_job(stmt, env, table, pipeline)
        else:
            if pipeline.status == "SUSPENDED":
                raise _error(stmt, f"Materialized table {shown} refresh workflow has been suspended.")
            _cancel(pipeline)
            pipeline.status = "SUSPENDED"
        return TableResult.ok()
    if stmt.action == "RESUME":
        if m.refresh_mode == "CONTINUOUS":
            if pipeline.status == "ACTIVATED" and pipeline.job is not None and pipeline.job.is_running():
                raise _error(
                    stmt,
                    f"Materialized table {shown} continuous refresh job has been resumed, jobId is "
                    f"{pipeline.job.job_id}.",
                )
            _start_continuous(env, table, pipeline.savepoint, stmt.options)
        else:
            if pipeline.status == "ACTIVATED":
                raise _error(stmt, f"Materialized table {shown} refresh workflow has been resumed.")
            _start_schedule(env, table.path)
            pipeline.dynamic_options = dict(stmt.options)
        return TableResult.ok()
    if stmt.action == "REFRESH":
        return _refresh_statement(env, stmt, table)
    if stmt.action == "AS":
        assert stmt.query is not None
        return _alter_query(env, stmt, table, stmt.query)
    if stmt.action == "SCHEMA":
        return _alter_schema(env, stmt, table)
    if stmt.action == "DISTRIBUTION":
        raise UnsupportedSqlError(
            "ALTER MATERIALIZED TABLE ... ADD / MODIFY / DROP DISTRIBUTION is not supported: the refresh job "
            "writes the table, and streamsql's connectors write no buckets.",
            sql=stmt.sql,
            line=1,
            column=1,
        )
    return _alter_options(env, stmt, table, pipeline)


_ALTER_FAILED = "Failed to execute ALTER MATERIALIZED TABLE statement.\n"


def _persisted(c: ColumnDef) -> bool:
    return c.kind == "physical" or (c.kind == "metadata" and not c.virtual)


def _alter_schema(env: TableEnvironment, stmt: AlterMaterializedTable, table: CatalogTable) -> TableResult:
    """ADD / MODIFY / DROP of columns, watermark and primary key, as Flink 2.3 allows them
    on a materialized table: its query defines the persisted (physical and non-virtual
    metadata) columns, so only non-persisted columns (computed, metadata VIRTUAL) may be
    added or dropped; a persisted column may change its comment, position or type (to one
    its values cast to implicitly). The refresh pipeline goes on: what it writes is the
    same."""
    change = stmt.change
    assert change is not None
    m = table.materialized
    assert m is not None
    query_columns = _query_columns(env, m.query, stmt.sql)
    if change.action in ("ADD", "MODIFY"):
        for item in change.columns:
            c = item.column
            if _persisted(c) and c.name not in query_columns:
                kind = "physical" if c.kind == "physical" else "metadata persisted"
                raise _error(
                    stmt,
                    _ALTER_FAILED + "Invalid schema change. All persisted (physical and metadata) columns in the "
                    f"schema part need to be present in the query part.\nHowever, {kind} column `{c.name}` could "
                    "not be found in the query.",
                    VALIDATION_EXCEPTION,
                )
    create = changed_definition(table, change)
    old = {c.name: c for c in table.columns}
    if change.action == "MODIFY":
        for item in change.columns:
            c, before = item.column, old.get(item.column.name)
            if before is None:
                continue
            if c.kind != before.kind:
                raise _error(
                    stmt,
                    _ALTER_FAILED + f"Changing of {before.kind} column '{c.name}' to {c.kind} column is not supported.",
                    VALIDATION_EXCEPTION,
                )
            if c.kind != "computed" and c.type is not None and not implicitly_castable(before.type, c.type):
                raise _error(
                    stmt,
                    _ALTER_FAILED + f"Column '{c.name}' with type {before.type} can not be changed to type {c.type}.",
                    VALIDATION_EXCEPTION,
                )
    if change.action == "DROP_COLUMNS":
        used = [n for n in query_columns if n in change.keys]
        if used:
            shown = ", ".join(f"'{n}'" for n in used)
            raise _error(stmt, _ALTER_FAILED + f"Column(s) ({shown}) are used in query.", VALIDATION_EXCEPTION)
        for col in table.columns:
            if col.name in change.keys and _persisted(col.definition):
                raise _error(
                    stmt,
                    _ALTER_FAILED
                    + f"The column `{col.name}` is a persisted column. Dropping of persisted columns is not supported.",
                    VALIDATION_EXCEPTION,
                )
    new = env.catalog.resolve_table(create, table.path)
    env.catalog.replace_permanent(replace(new, materialized=replace(m, explicit_schema=True)))
    return TableResult.ok()


def _refresh_statement(env: TableEnvironment, stmt: AlterMaterializedTable, table: CatalogTable) -> TableResult:
    from streamsql import client_output

    names = [c.name for c in table.columns]
    unknown = [k for k, _ in stmt.partition if k not in names]
    if unknown:
        raise _error(
            stmt,
            "The partition spec contains unknown partition keys:\n\n"
            + "\n".join(unknown)
            + "\n\nAll known partition keys are:\n\n"
            + "\n".join(table.partitioned_by),
            VALIDATION_EXCEPTION,
        )
    not_strings = [k for k, _ in stmt.partition if table.columns[names.index(k)].type.name not in ("CHAR", "VARCHAR")]
    if not_strings:
        raise _error(
            stmt,
            "Currently, refreshing materialized table only supports referring to char, varchar and string type "
            "partition keys. All specified partition keys in partition specs with unsupported types are:\n\n"
            + "\n".join(not_strings),
            VALIDATION_EXCEPTION,
        )
    job = refresh(env, table, stmt.partition)
    if client_output.dml_sync(env):
        job.wait()
    fields = (Field("job_id", STRING()), Field("cluster_info", MAP(STRING(), STRING())))
    return TableResult.of_rows(fields, [(job.job_id, [(TARGET.key, env.runner)])])


def _alter_query(env: TableEnvironment, stmt: Any, table: CatalogTable, query: exp.Expression) -> TableResult:
    """ALTER MATERIALIZED TABLE ... AS query (and CREATE OR ALTER on an existing one): the
    schema may only gain nullable columns at its end; a CONTINUOUS job restarts on the new
    query without its state."""
    m = table.materialized
    assert m is not None
    new_stmt = CreateMaterializedTable(
        name=table.path,
        query=query,
        # the non-persisted columns and the watermark stay; the query gives the rest
        columns=tuple(c.definition for c in table.columns if c.kind != "physical"),
        watermark=table.watermark,
        primary_key=table.primary_key,
        constraint_name=table.constraint_name,
        comment=table.comment,
        partitioned_by=table.partitioned_by,
        options=dict(table.options),
        freshness=m.freshness,
        refresh_mode=m.refresh_mode,
        sql=stmt.sql,
    )
    new = env.catalog.resolve_materialized_table(new_stmt, table.path)
    _check_evolution(stmt, table, new)
    pipeline = _pipeline(env, table.path)
    restart = m.refresh_mode == "CONTINUOUS" and pipeline.status == "ACTIVATED"
    if restart:
        _stop_job(stmt, env, table, pipeline)
    env.catalog.replace_permanent(new)
    if restart:
        _start_continuous(env, new, None)  # Flink: the new job does not restore the old state
    else:
        pipeline.savepoint = None
    return TableResult.ok()


def _check_evolution(stmt: Any, old: CatalogTable, new: CatalogTable) -> None:
    before = [c for c in old.columns if c.kind == "physical"]
    after = [c for c in new.columns if c.kind == "physical"]
    if len(after) < len(before):
        raise _error(
            stmt,
            "Failed to modify query because drop column is unsupported. When modifying a query, you can only "
            f"append new columns at the end of original schema. The original schema has {len(before)} columns, but "
            f"the newly derived schema from the query has {len(after)} columns.",
            VALIDATION_EXCEPTION,
        )
    for i, (a, b) in enumerate(zip(before, after, strict=False)):
        if a.name != b.name or _plain(a.type) != _plain(b.type):
            raise _error(
                stmt,
                "When modifying the query of a materialized table, currently only support appending columns at "
                "the end of original schema, dropping, renaming, and reordering columns are not supported.\n"
                f"Column mismatch at position {i}: Original column is [`{a.name}` {a.type}], but new column is "
                f"[`{b.name}` {b.type}].",
                VALIDATION_EXCEPTION,
            )
    for c in after[len(before) :]:
        if not c.type.nullable:
            raise _error(
                stmt,
                "When modifying the query of a materialized table, currently only supports appending nullable "
                f"columns at the end of original schema. The newly added column `{c.name}` is not nullable.",
                VALIDATION_EXCEPTION,
            )


def _plain(t: DataType) -> DataType:
    return t.with_nullable(True)


def _alter_options(
    env: TableEnvironment, stmt: AlterMaterializedTable, table: CatalogTable, pipeline: Pipeline
) -> TableResult:
    """SET (...) / RESET (...): the table's options; a running CONTINUOUS job restarts with
    them (without its state), as Flink's gateway does."""
    options = dict(table.options)
    if stmt.action == "SET":
        if not stmt.options:
            raise _error(stmt, "ALTER MATERIALIZED TABLE SET does not support empty options.", VALIDATION_EXCEPTION)
        options.update(stmt.options)
    else:
        if not stmt.keys:
            raise _error(stmt, "ALTER MATERIALIZED TABLE RESET does not support empty key.", VALIDATION_EXCEPTION)
        if "connector" in stmt.keys:
            raise _error(stmt, "The option 'connector' of a materialized table cannot be reset.", VALIDATION_EXCEPTION)
        for k in stmt.keys:
            options.pop(k, None)
    m = table.materialized
    assert m is not None
    restart = m.refresh_mode == "CONTINUOUS" and pipeline.status == "ACTIVATED"
    if restart:
        _stop_job(stmt, env, table, pipeline)
    new = replace(table, options=options)
    env.catalog.replace_permanent(new)
    if restart:
        _start_continuous(env, new, None)
    else:
        pipeline.savepoint = None
    return TableResult.ok()


def drop(env: TableEnvironment, stmt: DropMaterializedTable) -> TableResult:
    cat = env.catalog
    path = cat.qualify(stmt.name, stmt.sql)
    if cat.get_path(path) is None:
        if stmt.if_exists:
            return TableResult.ok()
        raise _error(stmt, f"Materialized table with identifier {quoted(path)} does not exist.", VALIDATION_EXCEPTION)
    _materialized(env, stmt, stmt.name)
    pipeline = pipelines(env).pop(path, None)
    if pipeline is not None:
        _cancel(pipeline)
    cat.catalogs[path[0]].remove(path[1], path[2])
    return TableResult.ok()


def status(env: TableEnvironment, path: tuple[str, str, str]) -> str:
    """ACTIVATED or SUSPENDED: the refresh pipeline's state in this session."""
    return _pipeline(env, path).status


__all__ = ["MaterializedDefinition", "alter", "create", "drop", "refresh", "status"]
