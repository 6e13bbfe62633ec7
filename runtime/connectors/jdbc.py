"""The 'jdbc' connector for PostgreSQL, with Flink's option names: a bounded scan source
(optionally partitioned into parallel splits), a lookup source for processing-time lookup
joins (Flink's `lookup.cache` options, one query per batch of keys), and a sink (append,
or upsert on the PRIMARY KEY; exactly-once with checkpoints: runtime.connectors.jdbc_sink).

Rows travel as CSV through `COPY (SELECT ...) TO STDOUT` and are converted to Arrow by
Arrow kernels (runtime.connectors.postgres), not row by row. The declared table is checked
against the PostgreSQL catalog when a query using it is planned: a missing column or a
type Flink's Postgres dialect does not map to the declared one fails then, naming it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from runtime.connectors.base import (
    SINK_PARALLELISM,
    UPSERT_SINK,
    ConfigOption,
    ConnectorFactory,
    Source,
    SourceContext,
    SplitReader,
    TableDescription,
    register_connector,
)
from runtime.connectors.jdbc_connection import (
    CONNECTION_OPTIONS,
    check_retry_options,
    endpoint,
    retry_timeout_s,
    table_name,
)
from runtime.connectors.jdbc_sink import JdbcSink
from runtime.connectors.lookup import LOOKUP_OPTIONS, LookupSource
from runtime.connectors.postgres import (
    check_columns,
    connect,
    csv_to_batches,
    from_text,
    quote_ident,
    select_text,
    table_columns,
    unique_keys,
)
from runtime.errors import ConnectorError
from runtime.types import Field

NAME = "jdbc"

SCAN_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "scan.partition.column",
        description="A numeric column to split the scan on: one split per partition, read in parallel "
        "(all four `scan.partition.*` options or none).",
    ),
    ConfigOption("scan.partition.num", type="int", description="The number of partitions."),
    ConfigOption(
        "scan.partition.lower-bound",
        type="int",
        description="The smallest value of the first partition. As in Flink, rows outside "
        "[lower-bound, upper-bound] (and NULLs) are not read.",
    ),
    ConfigOption("scan.partition.upper-bound", type="int", description="The largest value of the last partition."),
    ConfigOption(
        "scan.fetch-size",
        type="int",
        default="0",
        description="Rows per fetch (0: the runner's batch size). With `scan.auto-commit` = true the rows stream "
        "through one `COPY ... TO STDOUT` and are handed on in batches of this many rows; with false each fetch "
        "is one `FETCH` of this many rows from a server-side cursor.",
    ),
    ConfigOption(
        "scan.auto-commit",
        type="boolean",
        default="true",
        description="As the JDBC connection's auto-commit in Flink: true reads each split with one `COPY` statement "
        "in auto-commit mode (streamed, its own snapshot); false reads it inside a read-only REPEATABLE READ "
        "transaction through a server-side cursor, `scan.fetch-size` rows per round trip (PostgreSQL's JDBC driver "
        "honours the fetch size only then).",
    ),
)

SINK_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "sink.buffer-flush.max-rows",
        type="int",
        default="100",
        description="Without checkpointing: flush (one transaction) after this many buffered rows; 0 disables.",
    ),
    ConfigOption(
        "sink.buffer-flush.interval",
        type="duration",
        default="1 s",
        description="Without checkpointing: flush buffered rows this often. With checkpointing each "
        "checkpoint's rows commit in one transaction when the checkpoint completes (exactly-once).",
    ),
    ConfigOption("sink.max-retries", type="int", default="3", description="Retries of a failed write transaction."),
    SINK_PARALLELISM,
)

OPTIONS: tuple[ConfigOption[Any], ...] = (*CONNECTION_OPTIONS, *SCAN_OPTIONS, *LOOKUP_OPTIONS, *SINK_OPTIONS)


# --------------------------------------------------------------------------- planning check

_PARTITION_KEYS = (
    "scan.partition.column",
    "scan.partition.num",
    "scan.partition.lower-bound",
    "scan.partition.upper-bound",
)


def _partitions(options: dict[str, str]) -> list[tuple[int, int]] | None:
    """Flink's numeric BETWEEN ranges: `num` contiguous ranges covering [lower, upper]."""
    given = [k for k in _PARTITION_KEYS if options.get(k) is not None]
    if not given:
        return None
    if len(given) != len(_PARTITION_KEYS):
        missing = [k for k in _PARTITION_KEYS if k not in given]
        raise ConnectorError(
            f"Either all or none of the scan.partition.* options must be set for connector 'jdbc'; missing: "
            f"{', '.join(missing)}."
        )
    num, lo, hi = (int(options[k]) for k in _PARTITION_KEYS[1:])
    if num < 1:
        raise ConnectorError("'scan.partition.num' must be at least 1.")
    if lo > hi:
        raise ConnectorError("'scan.partition.lower-bound' must not be larger than 'scan.partition.upper-bound'.")
    count = hi - lo + 1
    num = min(num, count)
    size, big = divmod(count, num)
    out, start = [], lo
    for i in range(num):
        n = size + (1 if i < big else 0)
        out.append((start, start + n - 1))
        start += n
    return out


def check_table(desc: TableDescription) -> None:
    """Planning time: the PostgreSQL table exists and carries the declared columns; a
    partitioned scan names a column of it; an upsert sink's key is unique there."""
    options, schema, pk = dict(desc.options), desc.schema, desc.primary_key
    role = "sink" if desc.sink else "scan"
    check_retry_options(options)
    table = table_name(options)
    parts = _partitions(options)
    ep = endpoint(options)
    with connect(ep, retry_timeout_s=min(retry_timeout_s(options), 10)) as con:
        columns = table_columns(con, table)
        if columns is None:
            raise ConnectorError(f"Table '{table}' does not exist in the PostgreSQL database {ep.describe()}.")
        check_columns(NAME, table, ep.describe(), columns, schema)
        if parts is not None and role == "scan":
            col = options["scan.partition.column"]
            if col not in {f.name for f in schema}:
                raise ConnectorError(f"'scan.partition.column' '{col}' is not a column of table '{table}'.")
        if role == "sink" and pk and set(pk) not in unique_keys(con, table):
            raise ConnectorError(
                f"The jdbc sink upserts on the PRIMARY KEY ({', '.join(pk)}) of table '{table}', but the PostgreSQL "
                f"table has no PRIMARY KEY or UNIQUE index on exactly these columns (INSERT ... ON CONFLICT needs one)."
            )


# --------------------------------------------------------------------------- scan


_BLOCK_BYTES = 16 << 20


class _Reader(SplitReader):
    """One split: `SELECT cols FROM t [WHERE col BETWEEN lo AND hi]`, read as
    'scan.auto-commit' says.

    - true (Flink's default): one `COPY (SELECT ...) TO STDOUT` on an auto-commit
      connection. The server sends one CopyData message per row, so the rows are gathered
      into blocks of whole rows (~16 MB) and each block is parsed by Arrow's CSV reader at
      once: a split is never held whole in memory, and parsing runs on large blocks.
    - false: a read-only REPEATABLE READ transaction and a server-side cursor (psycopg's
      named cursor, `DECLARE ... NO SCROLL CURSOR`), fetched `scan.fetch-size` rows per
      round trip (what PostgreSQL's JDBC driver does with auto-commit off and a fetch
      size). Every column is selected as text, so a fetch is turned into Arrow columns by
      the same kernels as COPY's text (psycopg builds the row tuples in C; no Python code
      runs per row)."""

    def __init__(self, source: JdbcSource, bounds: tuple[int, int] | None) -> None:
        self.source = source
        self.bounds = bounds
        self._con: Any = None
        self._chunks: Iterator[Any] | None = None
        self._copy: Any = None
        self._cursor: Any = None
        self._done = False
        self._rest: list[pa.RecordBatch] = []

    def _where(self) -> str:
        if self.bounds is None:
            return ""
        column = quote_ident(self.source.partition_column or "")
        return f" WHERE {column} BETWEEN {self.bounds[0]} AND {self.bounds[1]}"

    def _open_copy(self) -> Iterator[Any]:
        s = self.source
        sql = f"COPY (SELECT {select_text(s.fields)} FROM {quote_ident(s.table)}{self._where()}) TO STDOUT (FORMAT csv)"
        self._con = connect(s.endpoint, autocommit=True, retry_timeout_s=s.retry_s)
        self._copy = self._con.cursor().copy(sql)  # referenced while it runs (collecting it cancels the COPY)
        return iter(self._copy.__enter__())

    def _open_cursor(self) -> Any:
        s = self.source
        columns = ", ".join(f"{quote_ident(f.name)}::text" for f in s.fields)
        self._con = connect(s.endpoint, autocommit=False, retry_timeout_s=s.retry_s)
        self._con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cursor = self._con.cursor(name=f"streamsql_scan_{uuid.uuid4().hex[:12]}")
        cursor.execute(f"SELECT {columns} FROM {quote_ident(s.table)}{self._where()}")
        return cursor

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        rows = max(1, self.source.fetch_size or max_rows)
        if not self.source.auto_commit:
            return self._read_cursor(rows)
        if self._chunks is None:
            self._chunks = self._open_copy()
        while not self._rest:
            block = bytearray()
            for chunk in self._chunks:
                block += chunk
                if len(block) >= _BLOCK_BYTES:
                    break
            if not block:
                self.close()
                return None
            for b in csv_to_batches(bytes(block), self.source.fields, rows):
                self._rest += [b.slice(off, rows) for off in range(0, b.num_rows, rows)]
            self._rest.reverse()
        return self._rest.pop()

    def _read_cursor(self, rows: int) -> pa.RecordBatch | None:
        if self._done:
            return None
        if self._cursor is None:
            self._cursor = self._open_cursor()
        fetched = self._cursor.fetchmany(rows)  # one FETCH FORWARD `rows` round trip
        if not fetched:
            self._done = True
            self.close()
            return None
        fields = self.source.fields
        columns = zip(*fetched, strict=True) if fields else iter(())
        arrays = [from_text(pa.array(col, type=pa.string()), f.type) for col, f in zip(columns, fields, strict=True)]
        schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in fields])
        return pa.RecordBatch.from_arrays(arrays, schema=schema)

    def close(self) -> None:
        """Closing the connection ends the COPY or the cursor's read-only transaction."""
        if self._con is not None:
            con, self._con, self._copy, self._cursor = self._con, None, None, None
            con.close()


class JdbcSource(Source):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None) -> None:
        self.endpoint = endpoint(options)
        self.table = table_name(options)
        self.retry_s = retry_timeout_s(options)
        self.fields = schema if projection is None else tuple(schema[i] for i in projection)
        self.produced_schema = self.fields
        self.partitions = _partitions(options)
        self.partition_column = options.get("scan.partition.column")
        self.fetch_size = int(options.get("scan.fetch-size") or 0)
        self.auto_commit = (options.get("scan.auto-commit") or "true").strip().lower() != "false"

    def splits(self) -> list[str]:
        return [str(i) for i in range(len(self.partitions))] if self.partitions else ["0"]

    def create_reader(self, split_id: str) -> SplitReader:
        return _Reader(self, self.partitions[int(split_id)] if self.partitions else None)


# --------------------------------------------------------------------------- lookup


class JdbcLookup(LookupSource):
    """`lookup(key_columns, keys)`: ONE query for all keys of a batch,
    `WHERE (k1, k2) IN (SELECT * FROM unnest(array1, array2))`; failed queries are retried
    'lookup.max-retries' times on a new connection."""

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...]) -> None:
        self.endpoint = endpoint(options)
        self.table = table_name(options)
        self.schema = schema
        self.retry_s = retry_timeout_s(options)
        self.max_retries = int(options.get("lookup.max-retries") or 3)
        self.queries = 0
        self._con: Any = None
        self._types: dict[str, str] = {}

    def _connection(self) -> Any:
        if self._con is None or self._con.closed:
            self._con = connect(self.endpoint, retry_timeout_s=self.retry_s)
            self._types = {c.name: c.typname for c in table_columns(self._con, self.table) or []}
        return self._con

    def lookup(self, key_columns: list[int], keys: pa.Table) -> pa.Table:
        import psycopg
        from psycopg import sql

        self.queries += 1
        for attempt in range(self.max_retries + 1):
            try:
                con = self._connection()
                names = [self.schema[c].name for c in key_columns]
                arrays = [
                    sql.SQL("{}::{}[]").format(sql.Literal(keys.column(i).to_pylist()), sql.SQL(self._types[n]))
                    for i, n in enumerate(names)
                ]
                cond = sql.SQL("({}) IN (SELECT * FROM unnest({}))").format(
                    sql.SQL(", ").join(sql.Identifier(n) for n in names), sql.SQL(", ").join(arrays)
                )
                query = sql.SQL("COPY (SELECT {} FROM {} WHERE {}) TO STDOUT (FORMAT csv)").format(
                    sql.SQL(select_text(self.schema)), sql.SQL(quote_ident(self.table)), cond
                )
                buf = bytearray()
                with con.cursor().copy(query) as copy:
                    for chunk in copy:
                        buf += chunk
                break
            except psycopg.OperationalError:
                self.close()
                if attempt == self.max_retries:
                    raise
        batches = list(csv_to_batches(bytes(buf), self.schema, 65536))
        arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.schema])
        return pa.Table.from_batches(batches, schema=arrow_schema)

    def close(self) -> None:
        if self._con is not None:
            con, self._con, self._copy = self._con, None, None
            con.close()


GUIDE = """
## How it works

- **Connections**: psycopg 3 (`pip install 'streamsql[postgres]'`), imported when a job first uses the
  connector. Only PostgreSQL URLs are accepted; `driver` is ignored.
- **Planning-time check**: when a query using the table is planned (also by `EXPLAIN`), the PostgreSQL table
  must exist and have every declared column with a type Flink's JDBC Postgres dialect maps to the declared
  one (`smallint`/`integer`/`bigint` → SMALLINT/INT/BIGINT, `real`/`double precision` → FLOAT/DOUBLE,
  `numeric` → DECIMAL, `boolean`, `text`/`varchar`/`char` → STRING, `bytea` → BYTES, `date`, `time`,
  `timestamp` → TIMESTAMP, `timestamptz` → TIMESTAMP_LTZ, arrays → ARRAY, `json`/`jsonb`/`uuid` → STRING).
  A mismatch fails naming the column and both types.
- **Scan**: with `scan.auto-commit` = true (the default) each split is one `COPY (SELECT ...) TO STDOUT
  (FORMAT csv)` on an auto-commit connection, streamed and parsed into Arrow batches by Arrow's CSV reader and
  cast by Arrow kernels. With `scan.auto-commit` = false each split is read in a read-only REPEATABLE READ
  transaction through a server-side cursor, `scan.fetch-size` rows per `FETCH` (as PostgreSQL's JDBC driver
  honours the fetch size only with auto-commit off); the columns come as text and are cast by the same kernels.
  COPY is the faster of the two; both hold at most a block of rows in memory. With the four
  `scan.partition.*` options the scan has `scan.partition.num` splits `col BETWEEN lo AND hi` (contiguous
  ranges covering the bounds, as Flink's numeric provider); parallel subtasks read different splits. As in
  Flink, rows outside the bounds and rows whose column is NULL are not read.
- **Lookup**: one query per input batch for all its distinct keys not in the cache:
  `WHERE (k1, k2) IN (SELECT * FROM unnest($keys1, $keys2))`; `lookup.cache` = `PARTIAL` keeps rows per key
  (`max-rows`, `expire-after-write`, `expire-after-access`, `cache-missing-key`).
- **Sink**: rows go to a temporary staging table by `COPY ... FROM STDIN`, then one set statement applies them:
  append (`INSERT ... SELECT`) without a PRIMARY KEY (update/delete rows are refused), or, with the table's
  PRIMARY KEY (which must be a PRIMARY KEY or UNIQUE index of the PostgreSQL table), the last change per key:
  `DELETE ... USING` for -D and `INSERT ... ON CONFLICT (key) DO UPDATE` for +I/+U.
- **Exactly-once**: with checkpointing, a checkpoint's rows are committed in one transaction when the checkpoint
  completes, together with a marker row in the side table `_streamsql_commits` (created in the target
  database). A restored job replays the commits of completed checkpoints; the marker makes each replay a no-op.
  Without checkpointing, rows are flushed every `sink.buffer-flush.max-rows` rows / `sink.buffer-flush.interval`
  (at-least-once, as Flink's JDBC sink).
- **Spark runner** (`execution.target` = `spark`), with no PostgreSQL JDBC jar: streamsql reaches PostgreSQL
  from Python with psycopg there too (`runtime/connectors/jdbc_spark.py`). A scan is a PySpark Python data source
  (Spark 4's `pyspark.sql.datasource`) with one input partition per split (`scan.partition.*`), each read by the
  same split reader as above in a Spark Python worker and handed to Spark as Arrow batches; in a STREAMING job it
  is a streaming source of one micro-batch (the table is bounded, as in Flink; a query restarted from its
  checkpoint does not read it again). A sink uses the same sink code: in BATCH each Spark partition is written by its
  task in one transaction recording `spark-<job>-<partition>` in `_streamsql_commits` (a retried task does not
  write twice; with a PRIMARY KEY the rows are first hashed on it, so a key is written by one task); in STREAMING
  each micro-batch's changelog (`foreachBatch`) is applied in ONE transaction recording
  `spark-<query>-<batch id>`, so a micro-batch Spark replays after a restart is skipped (exactly once); its rows
  pass through the Spark driver. Lookup joins (processing time) and
  `postgres-cdc` are refused at planning, with the reason. Spark's own JDBC data source is not used: it needs the
  PostgreSQL JDBC driver jar, which no package the project installs ships.

## Example

```sql
CREATE TABLE customers (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (
  'connector' = 'jdbc', 'url' = 'jdbc:postgresql://localhost:5432/shop', 'table-name' = 'customers',
  'username' = 'flink', 'password' = 'secret',
  'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '10000',
  'lookup.partial-cache.expire-after-write' = '1 min');

SELECT o.id, c.name FROM orders AS o
  JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer_id = c.id;
```

See the `postgres-cdc` page for a CDC → aggregation → jdbc upsert pipeline. To read and write every table of a
PostgreSQL server without declaring each, use the `jdbc` catalog ([catalogs.md](../catalogs.md#the-jdbc-catalog-postgresql)):
its tables carry this connector's options.
"""

# --------------------------------------------------------------------------- factory


def _create_source(
    options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
) -> Source:
    return JdbcSource(options, schema, projection)


def _create_sink(options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> Any:
    return JdbcSink(options, schema, ctx)


FACTORY = register_connector(
    ConnectorFactory(
        name=NAME,
        description="A PostgreSQL table over psycopg (`url` = `jdbc:postgresql://host:port/database`): a bounded "
        "scan source (parallel when `scan.partition.*` split it), a lookup source for processing-time lookup "
        "joins with Flink's `lookup.cache` options (one query per batch of keys), and a sink that appends or, "
        "with a PRIMARY KEY, upserts (`INSERT ... ON CONFLICT DO UPDATE`, `DELETE` for deletions); with "
        "checkpointing each checkpoint's rows commit in one transaction when it completes, exactly once.",
        options=OPTIONS,
        create_source=_create_source,
        create_sink=_create_sink,
        # Flink's JdbcDynamicTableSink: upserts with a PRIMARY KEY, an updating input refused without one
        sink_changelog_mode=lambda options, primary_key: UPSERT_SINK if primary_key else "I",
        sink_update_hint="Declare PRIMARY KEY (...) NOT ENFORCED on the sink table to upsert on it (Flink's JDBC "
        "sink: 'please declare primary key for sink table when query contains update/delete record.').",
        create_lookup=lambda options, schema, config: JdbcLookup(options, schema),
        validate=check_table,
        guide=GUIDE,
        spark_module="runtime.connectors.jdbc_spark",
        spark_streaming_scan=True,
    )
)
