"""The 'jdbc' connector on the Spark runner, with no JVM driver: PostgreSQL is reached through
psycopg from Python, exactly as on the local runner, so no PostgreSQL JDBC jar has to be
found and put on Spark's classpath.

- **Scan**: a PySpark Python data source (`pyspark.sql.datasource`, Spark 4). Its
  input partitions are the scan's splits (`scan.partition.*`: one per range, else one), and
  each partition is read by the connector's own split reader (runtime.connectors.jdbc:
  `COPY` or a server-side cursor, as 'scan.auto-commit' says) in a Spark Python worker,
  handed to Spark as Arrow batches. In a STREAMING job the same scan is a streaming source
  of one micro-batch (the table is bounded, as in Flink).
- **Sink**: `write_rows` applies rows with the connector's own sink code
  (runtime.connectors.jdbc_sink: append, or upsert on the PRIMARY KEY with `INSERT ... ON
  CONFLICT`, deletes for -D) in ONE transaction that records its id in the commit-marker
  table, so the same id is never applied twice. The Spark runner calls it per partition in
  BATCH (`<job>-<partition>`: a retried task is skipped) and per micro-batch in STREAMING
  (`foreachBatch`, `<query>-<batch id>`: a micro-batch Spark replays after a restart, which
  ran but was not recorded by Spark, is skipped: exactly once).

Imported only by the Spark runner (it imports pyspark); named by the factory's
`spark_module`.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from runtime.connectors.base import PRIMARY_KEY, SourceContext
from runtime.connectors.jdbc import JdbcSource
from runtime.connectors.jdbc_sink import JdbcSink
from runtime.types import Field

FORMAT = "streamsql_jdbc"
_SPEC = "spec"  # the data source option carrying the pickled (options, fields)


class _Reader(DataSourceReader):  # type: ignore[misc]
    """Runs in Spark's Python workers: one input partition per split of the jdbc scan."""

    def __init__(self, options: dict[str, str], fields: tuple[Field, ...], schema: Any) -> None:
        self.options = options
        self.fields = fields
        self.schema = schema

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(s) for s in JdbcSource(self.options, self.fields, None).splits()]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from pyspark.sql.pandas.types import to_arrow_schema

        target = to_arrow_schema(self.schema, timezone="UTC")
        reader = JdbcSource(self.options, self.fields, None).create_reader(partition.value)
        try:
            while (batch := reader.read(65536)) is not None:
                if batch.num_rows:
                    yield _to_spark_arrow(batch, target)
        finally:
            reader.close()


class _StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """The bounded scan in a STREAMING job: one micro-batch reading every split (offset
    {"read": 0} before it, {"read": 1} after), then nothing; a query restarted from its
    checkpoint after that batch does not read the table again."""

    def __init__(self, options: dict[str, str], fields: tuple[Field, ...], schema: Any) -> None:
        self.batch = _Reader(options, fields, schema)

    def initialOffset(self) -> dict[str, int]:  # noqa: N802 - PySpark's names
        return {"read": 0}

    def latestOffset(self, start: Any = None, limit: Any = None) -> dict[str, int]:  # noqa: N802
        return {"read": 1}

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        """The table's rows are all there is (the target offset is always {"read": 1})."""

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[InputPartition]:
        return self.batch.partitions() if start["read"] == 0 and end["read"] == 1 else []

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.batch.read(partition)

    def commit(self, end: dict[str, int]) -> None:
        pass


class JdbcDataSource(DataSource):  # type: ignore[misc]
    """`spark.read.format("streamsql_jdbc").schema(...).option("spec", ...)`: the table's rows
    as columns named by the schema (the scan's physical columns, in order)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def reader(self, schema: Any) -> _Reader:
        return _Reader(*self._spec(), schema)

    def streamReader(self, schema: Any) -> _StreamReader:  # noqa: N802 - PySpark's name
        return _StreamReader(*self._spec(), schema)

    def _spec(self) -> tuple[dict[str, str], tuple[Field, ...]]:
        options, fields = pickle.loads(base64.b64decode(self.options[_SPEC]))  # noqa: S301 - our own spec
        return options, fields


def _to_spark_arrow(batch: pa.RecordBatch, target: pa.Schema) -> pa.RecordBatch:
    """The batch in the Arrow types Spark expects for the declared schema (TIMESTAMP keeps its
    wall-clock digits as a UTC instant, as the Spark runner maps it; units widen to µs)."""
    cols = [batch.column(i).cast(target.field(i).type) for i in range(batch.num_columns)]
    return pa.RecordBatch.from_arrays(cols, schema=target)


def read_frame(spark: Any, options: dict[str, str], fields: tuple[Field, ...], schema: Any, streaming: bool) -> Any:
    """A DataFrame of the table's `fields` (Spark `schema`: the runner's column names); a
    streaming one (`readStream`) in a STREAMING job."""
    spark.dataSource.register(JdbcDataSource)
    spec = base64.b64encode(pickle.dumps((dict(options), tuple(fields)))).decode()
    reader = spark.readStream if streaming else spark.read
    return reader.format(FORMAT).schema(schema).option(_SPEC, spec).load()


def write_rows(
    rows: pa.Table,
    options: dict[str, str],
    fields: tuple[Field, ...],
    primary_key: tuple[str, ...],
    txn: str | None,
) -> None:
    """Apply `rows` (the sink's columns plus the row kind `__op`) to the table in one
    transaction; with `txn`, only if no transaction recorded it before."""
    opts = dict(options)
    if primary_key:
        opts[PRIMARY_KEY] = ",".join(primary_key)
    sink = JdbcSink(opts, fields, SourceContext(mode="BATCH", config={}))
    try:
        if rows.num_rows or txn is not None:
            sink.apply_transaction(rows, txn)
    finally:
        sink.abort()  # nothing is buffered: closes the connection
