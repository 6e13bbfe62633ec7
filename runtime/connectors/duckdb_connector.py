"""The 'duckdb' connector (JDBC-like): a table of a DuckDB database file, read as a bounded
scan source or queried by key as a lookup source (lookup joins, with Flink's
`lookup.cache` options, see runtime.connectors.lookup), and written as a sink
(runtime.connectors.duckdb_sink: exactly-once with checkpoints, append or upsert).

Options: `path` (the database file), `table-name`. Each scan or lookup opens the file
read-only for the duration of the query, so rows another process committed are seen by
the next lookup that is not served from the cache.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa

from runtime.connectors.base import (
    UPSERT_SINK,
    ConfigOption,
    ConnectorFactory,
    Source,
    SourceContext,
    SplitReader,
    register_connector,
)
from runtime.connectors.duckdb_sink import DuckDBSink
from runtime.connectors.lookup import LOOKUP_OPTIONS, LookupSource
from runtime.errors import ConnectorError
from runtime.types import Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption("path", required=True, description="The DuckDB database file (a sink creates it when missing)."),
    ConfigOption(
        "table-name",
        required=True,
        description="The table to read or write (optionally schema-qualified); a sink creates it when missing.",
    ),
    ConfigOption(
        "sink.primary-key",
        description="Comma-separated key columns the sink upserts on (default: the DuckDB table's PRIMARY KEY). "
        "Without a key the sink appends and refuses update/delete changes.",
    ),
    ConfigOption(
        "sink.buffer-flush.interval",
        type="duration",
        default="1 s",
        description="Without checkpointing: how often the sink commits the rows it buffered (one transaction each).",
    ),
    *LOOKUP_OPTIONS,
)


def _quote(name: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in name.split("."))


def _settings(options: dict[str, str]) -> tuple[str, str]:
    path = options.get("path")
    table = options.get("table-name")
    if not path:
        raise ConnectorError("Missing required option 'path' for connector 'duckdb'.")
    if not table:
        raise ConnectorError("Missing required option 'table-name' for connector 'duckdb'.")
    path = os.path.abspath(os.path.expanduser(path))
    if not os.path.exists(path):
        raise ConnectorError(f"DuckDB database file '{path}' does not exist")
    return path, table


def _conform(table: pa.Table, schema: tuple[Field, ...]) -> pa.Table:
    """The query result with the table's declared column names and Arrow types."""
    arrays = []
    for col, f in zip(table.columns, schema, strict=True):
        t = f.type.to_arrow()
        arrays.append(col if col.type == t else col.cast(t))
    return pa.Table.from_arrays(arrays, schema=pa.schema([pa.field(f.name, f.type.to_arrow()) for f in schema]))


def _select(schema: tuple[Field, ...]) -> str:
    return ", ".join(_quote(f.name) for f in schema)


class DuckDBLookup(LookupSource):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...]) -> None:
        self.path, self.table = _settings(options)
        self.schema = schema
        self.queries = 0

    def lookup(self, key_columns: list[int], keys: pa.Table) -> pa.Table:
        import duckdb

        self.queries += 1
        names = [f"k{i}" for i in range(len(key_columns))]
        probe = pa.Table.from_arrays(list(keys.columns), names=names)  # noqa: F841 - used by the query
        cond = " AND ".join(f"t.{_quote(self.schema[c].name)} = p.{n}" for c, n in zip(key_columns, names, strict=True))
        sql = f"SELECT {', '.join('t.' + _quote(f.name) for f in self.schema)} FROM {_quote(self.table)} t SEMI JOIN probe p ON {cond}"
        con = duckdb.connect(self.path, read_only=True)
        try:
            con.register("probe", probe)
            result = con.sql(sql).to_arrow_table()
        finally:
            con.close()
        return _conform(result, self.schema)


class _Reader(SplitReader):
    def __init__(self, path: str, table: str, schema: tuple[Field, ...], projection: list[int] | None) -> None:
        self.fields = schema if projection is None else tuple(schema[i] for i in projection)
        self.path, self.table = path, table
        self.batches: list[pa.RecordBatch] | None = None

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        import duckdb

        if self.batches is None:
            con = duckdb.connect(self.path, read_only=True)
            try:
                result = con.sql(f"SELECT {_select(self.fields)} FROM {_quote(self.table)}").to_arrow_table()
            finally:
                con.close()
            self.batches = _conform(result, self.fields).to_batches(max_chunksize=max(1, max_rows))
        return self.batches.pop(0) if self.batches else None


class DuckDBSource(Source):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None) -> None:
        self.path, self.table = _settings(options)
        self.schema = schema
        self.projection = projection
        self.produced_schema = schema if projection is None else tuple(schema[i] for i in projection)

    def splits(self) -> list[str]:
        return ["0"]

    def create_reader(self, split_id: str) -> SplitReader:
        return _Reader(self.path, self.table, self.schema, self.projection)


def _create_source(
    options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
) -> Source:
    return DuckDBSource(options, schema, projection)


def _create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Any:
    return DuckDBSink(options, schema, ctx)


def sink_changelog_mode(options: dict[str, str], primary_key: tuple[str, ...]) -> str:
    """Upserts on a key: the table's PRIMARY KEY, 'sink.primary-key', or the PRIMARY KEY of
    the DuckDB table when it exists already (the sink takes that one at open); appends
    otherwise, and the planner refuses an updating input. A file that cannot be read now
    (another writer holds it) counts as keyed: the sink refuses updates when it runs."""
    if primary_key or (options.get("sink.primary-key") or "").strip():
        return UPSERT_SINK
    return UPSERT_SINK if _existing_table_has_key(options) is not False else "I"


def _existing_table_has_key(options: dict[str, str]) -> bool | None:
    """Whether the sink's existing DuckDB table has a PRIMARY KEY (False when the file or
    the table is not there; None when it cannot be told)."""
    path, table = options.get("path"), options.get("table-name")
    if not path or not table or not os.path.exists(os.path.expanduser(path)):
        return False
    import duckdb  # only for an updating query into a duckdb table declared without a key

    try:
        con = duckdb.connect(os.path.expanduser(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        rows = con.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
            [table.split(".")[-1]],
        ).fetchone()
    finally:
        con.close()
    return bool(rows and rows[0])


FACTORY = register_connector(
    ConnectorFactory(
        name="duckdb",
        description="A table of a DuckDB database file: a bounded scan source, a lookup source for "
        "processing-time lookup joins (FOR SYSTEM_TIME AS OF o.proc_time), with Flink's lookup.cache options, "
        "and a sink (append, or upsert on a primary key) that commits each checkpoint's rows in one "
        "transaction, exactly once.",
        options=OPTIONS,
        create_source=_create_source,
        create_sink=_create_sink,
        sink_changelog_mode=sink_changelog_mode,
        sink_update_hint="Declare a PRIMARY KEY (...) NOT ENFORCED (or 'sink.primary-key') on the sink table to "
        "upsert on it.",
        create_lookup=lambda options, schema, config: DuckDBLookup(options, schema),
    )
)
