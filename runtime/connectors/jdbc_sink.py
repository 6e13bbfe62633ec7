"""The 'jdbc' sink: rows into a PostgreSQL table.

Without checkpointing, buffered rows are written every 'sink.buffer-flush.max-rows' rows
or 'sink.buffer-flush.interval' and at end of input, one transaction each (Flink's JDBC
sink: at-least-once). With checkpointing it is a two-phase-commit sink
(runtime.checkpoint.twophase): the rows between two barriers are handed to the checkpoint
(part of the snapshot, so nothing is lost if the process dies before the commit), and
when the checkpoint completes they are written in ONE transaction together with a marker
row `(txn)` in the side table `_streamsql_commits`. A commit replayed after a restore finds
its marker and does nothing, so an append sink holds every row exactly once and an upsert
sink is not rewound to an older state.

Writing: the rows are sent with `COPY ... FROM STDIN (FORMAT csv)` into a temporary
staging table (Arrow's CSV writer, no per-row Python), then applied by set statements:
append mode `INSERT INTO t SELECT * FROM stage`; upsert mode (a PRIMARY KEY) takes the
last change per key (+I/+U upsert, -D delete; -U is implied by the following +U), then
`DELETE ... USING` the deleted keys and `INSERT ... ON CONFLICT (key) DO UPDATE`.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.config import duration_ms
from runtime.connectors.base import Sink, SourceContext
from runtime.connectors.jdbc import endpoint, retry_timeout_s, table_name
from runtime.connectors.postgres import connect, last_per_key, quote_ident, to_csv
from runtime.errors import ConnectorError
from runtime.types import Field

MARKERS = "_streamsql_commits"


class JdbcSink(Sink):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        self.endpoint = endpoint(options)
        self.table = table_name(options)
        self.retry_s = retry_timeout_s(options)
        self.schema = tuple(schema)
        self.names = [f.name for f in schema]
        key = options.get("$internal.primary-key") or ""
        self.key = [k.strip() for k in key.split(",") if k.strip()]
        self.deferred_commit = False
        self.sink_id = ctx.config.get("$internal.sink-id") or "sink"
        self.txn_prefix = f"{self.sink_id}-{uuid.uuid4().hex}"
        self.max_rows = int(options.get("sink.buffer-flush.max-rows") or 100)
        interval = options.get("sink.buffer-flush.interval") or "1 s"
        self.flush_interval_s = (duration_ms(interval, "sink.buffer-flush.interval") or 0) / 1000
        self.max_retries = int(options.get("sink.max-retries") or 3)
        self._buffer: list[pa.RecordBatch] = []
        self._buffered = 0
        self._last_flush = time.monotonic()
        self._con: Any = None
        self._stage = f"_streamsql_stage_{uuid.uuid4().hex[:12]}"

    # ------------------------------------------------------------------ setup
    def _connection(self) -> Any:
        if self._con is None or self._con.closed:
            self._con = connect(self.endpoint, retry_timeout_s=self.retry_s)
            self._con.execute(f"CREATE TABLE IF NOT EXISTS {MARKERS} (txn text PRIMARY KEY)")
            cols = ", ".join(quote_ident(n) for n in self.names)
            self._con.execute(
                f"CREATE TEMPORARY TABLE IF NOT EXISTS {self._stage} AS SELECT {cols} FROM {quote_ident(self.table)} "
                "WITH NO DATA"
            )
            self._con.execute(f"ALTER TABLE {self._stage} ADD COLUMN IF NOT EXISTS __op smallint")
        return self._con

    def open(self) -> None:
        self._connection()

    # ------------------------------------------------------------------ writing
    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if not self.key and batch.schema.get_field_index(ROW_KIND) >= 0:
            kinds = row_kinds(batch)
            if np.any((kinds == UPDATE_BEFORE) | (kinds == DELETE)):
                raise ConnectorError(
                    f"The 'jdbc' sink table '{self.table}' has no PRIMARY KEY, so it can only append; the input "
                    "contains update/delete changes. Declare a PRIMARY KEY ... NOT ENFORCED to upsert."
                )
        self._buffer.append(batch)
        self._buffered += batch.num_rows
        if not self.deferred_commit and (
            (self.max_rows > 0 and self._buffered >= self.max_rows)
            or time.monotonic() - self._last_flush >= self.flush_interval_s
        ):
            self.flush()

    def _take(self) -> pa.Table | None:
        if not self._buffer:
            return None
        batches, self._buffer, self._buffered = self._buffer, [], 0
        cols = []
        for b in batches:
            kinds = row_kinds(b) if b.schema.get_field_index(ROW_KIND) >= 0 else np.zeros(b.num_rows, dtype=np.int8)
            data = data_columns(b)
            cols.append(
                pa.RecordBatch.from_arrays(
                    [*data.columns[: len(self.names)], pa.array(kinds, pa.int8())], names=[*self.names, ROW_KIND]
                )
            )
        return pa.Table.from_batches(cols)

    def flush(self) -> None:
        self._last_flush = time.monotonic()
        if self._buffer:
            self._apply([self._take()], [None])

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self._disconnect()

    def _disconnect(self) -> None:
        if self._con is not None:
            con, self._con = self._con, None
            con.close()

    # ------------------------------------------------------------------ two-phase commit
    def prepare_commit(self, checkpoint_id: int) -> dict[str, Any]:
        return {"txn": f"{self.txn_prefix}-{checkpoint_id}", "rows": self._take()}

    def commit(self, committables: list[dict[str, Any]]) -> None:
        self._apply([c["rows"] for c in committables], [c["txn"] for c in committables])

    def snapshot_state(self) -> dict[str, Any]:
        return {"txn_prefix": self.txn_prefix}

    def restore_state(self, state: dict[str, Any] | None, committables: list[dict[str, Any]]) -> None:
        if state:
            self.txn_prefix = state["txn_prefix"]
        self.commit(committables)

    def abort(self) -> None:
        self._buffer, self._buffered = [], 0
        self._disconnect()

    # ------------------------------------------------------------------ the transaction
    def _apply(self, tables: list[pa.Table | None], txns: list[str | None]) -> None:
        import psycopg

        for rows, txn in zip(tables, txns, strict=True):
            for attempt in range(self.max_retries + 1):
                try:
                    self._transaction(rows, txn)
                    break
                except psycopg.OperationalError:
                    self._disconnect()
                    if attempt == self.max_retries:
                        raise

    def _transaction(self, rows: pa.Table | None, txn: str | None) -> None:
        con = self._connection()
        with con.transaction():
            if txn is not None:
                done = con.execute(
                    f"INSERT INTO {MARKERS} VALUES (%s) ON CONFLICT DO NOTHING RETURNING txn", (txn,)
                ).fetchall()
                if not done:
                    return  # committed before (a replay after restore)
            if rows is not None and rows.num_rows:
                self._write_rows(con, rows)

    def _write_rows(self, con: Any, rows: pa.Table) -> None:
        kinds = rows.column(ROW_KIND).to_numpy()
        data = rows.drop_columns([ROW_KIND])
        cols = ", ".join(quote_ident(n) for n in self.names)
        target = quote_ident(self.table)
        if not self.key:
            keep = (kinds == INSERT) | (kinds == UPDATE_AFTER)
            self._stage_rows(con, data.filter(pa.array(keep)), None)
            con.execute(f"INSERT INTO {target} ({cols}) SELECT {cols} FROM {self._stage}")
            return
        final, final_kinds = last_per_key(data, kinds, self.key)
        self._stage_rows(con, final, final_kinds)
        on = " AND ".join(f"t.{quote_ident(k)} = s.{quote_ident(k)}" for k in self.key)
        con.execute(f"DELETE FROM {target} t USING {self._stage} s WHERE s.__op = {DELETE} AND {on}")
        others = [n for n in self.names if n not in self.key]
        action = (
            "DO UPDATE SET " + ", ".join(f"{quote_ident(n)} = EXCLUDED.{quote_ident(n)}" for n in others)
            if others
            else "DO NOTHING"
        )
        con.execute(
            f"INSERT INTO {target} ({cols}) SELECT {cols} FROM {self._stage} WHERE __op <> {DELETE} "
            f"ON CONFLICT ({', '.join(quote_ident(k) for k in self.key)}) {action}"
        )

    def _stage_rows(self, con: Any, data: pa.Table, kinds: np.ndarray | None) -> None:
        con.execute(f"TRUNCATE {self._stage}")
        if data.num_rows == 0:
            return
        names = list(self.names)
        if kinds is not None:
            data = data.append_column(ROW_KIND, pa.array(kinds.astype(np.int16)))
            names.append("__op")
        payload = to_csv(data)
        with con.cursor().copy(
            f"COPY {self._stage} ({', '.join(quote_ident(n) for n in names)}) FROM STDIN (FORMAT csv)"
        ) as copy:
            copy.write(payload)
