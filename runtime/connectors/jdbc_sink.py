"""The 'jdbc' sink: rows into a PostgreSQL table.

Buffered rows are written every 'sink.buffer-flush.max-rows' rows or
'sink.buffer-flush.interval' and at end of input (at-least-once), or with checkpointing
exactly once by two-phase commit: runtime.connectors.transactional_sink says how.

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

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER
from runtime.config import duration_ms
from runtime.connectors.base import SourceContext
from runtime.connectors.jdbc_connection import endpoint, retry_timeout_s, table_name
from runtime.connectors.postgres import connect, quote_ident, to_csv
from runtime.connectors.transactional_sink import MARKERS, TransactionalTableSink, last_per_key
from runtime.types import Field


class JdbcSink(TransactionalTableSink):
    connector = "jdbc"
    no_key_hint = "Declare a PRIMARY KEY ... NOT ENFORCED to upsert."

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        key = options.get("$internal.primary-key") or ""
        super().__init__(table_name(options), schema, [k.strip() for k in key.split(",") if k.strip()], ctx)
        self.endpoint = endpoint(options)
        self.retry_s = retry_timeout_s(options)
        self.max_rows = int(options.get("sink.buffer-flush.max-rows") or 100)
        interval = options.get("sink.buffer-flush.interval") or "1 s"
        self.flush_interval_s = (duration_ms(interval, "sink.buffer-flush.interval") or 0) / 1000
        self.max_retries = int(options.get("sink.max-retries") or 3)
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

    def _due(self) -> bool:
        return (self.max_rows > 0 and self._buffered >= self.max_rows) or (
            time.monotonic() - self._last_flush >= self.flush_interval_s
        )

    # ------------------------------------------------------------------ the transaction
    def _apply_one(self, rows: pa.Table | None, txn: str | None) -> None:
        import psycopg

        for attempt in range(self.max_retries + 1):
            try:
                self._transaction(rows, txn)
                return
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
