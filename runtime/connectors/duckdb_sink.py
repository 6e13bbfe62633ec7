"""The 'duckdb' sink: rows into a table of a DuckDB database file.

Without checkpointing rows are committed every 'sink.buffer-flush.interval' (1 s, as
Flink's JDBC sink) and at end of input, one transaction each: at-least-once. With
checkpointing it is a two-phase-commit sink (runtime.checkpoint.twophase): rows are
buffered between barriers, the barrier hands them to the checkpoint (they are part of
the snapshot, so nothing is lost if the process dies before the commit), and when the
checkpoint completes they are written in ONE transaction together with a marker row
`(txn)` in `_streamsql_commits`. A replayed commit (restore after a crash between
completion and commit) finds its marker and does nothing: exactly once.

Append mode (no key) inserts +I/+U rows and refuses -U/-D. Upsert mode (a key from
'sink.primary-key', the planner, or the DuckDB table's PRIMARY KEY) applies a changelog:
per key the last change of the committed rows wins (+I/+U upsert, -D delete; -U is
implied by the following +U), done as one DELETE of the touched keys plus one INSERT.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, ROW_KIND, UPDATE_AFTER, UPDATE_BEFORE, data_columns, row_kinds
from runtime.config import duration_ms
from runtime.connectors.base import Sink, SourceContext
from runtime.errors import ConnectorError
from runtime.types import Field

MARKERS = "_streamsql_commits"


def _q(name: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in name.split("."))


class DuckDBSink(Sink):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        path, table = options.get("path"), options.get("table-name")
        if not path or not table:
            raise ConnectorError("The 'duckdb' sink needs the options 'path' and 'table-name'.")
        self.path = os.path.abspath(os.path.expanduser(path))
        self.table = table
        self.schema = tuple(schema)
        self.names = [f.name for f in schema]
        key = options.get("sink.primary-key") or options.get("$internal.primary-key") or ""
        self.key = [k.strip() for k in key.split(",") if k.strip()]
        self.deferred_commit = False
        self.sink_id = ctx.config.get("$internal.sink-id") or "sink"
        self.txn_prefix = f"{self.sink_id}-{uuid.uuid4().hex}"
        self._buffer: list[pa.RecordBatch] = []
        self._con: Any = None  # one connection while the sink is open (DuckDB: one writer process)
        self._last_flush = time.monotonic()
        interval = options.get("sink.buffer-flush.interval") or "1 s"
        self.flush_interval_s = (duration_ms(interval, "sink.buffer-flush.interval") or 0) / 1000
        self.arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in schema])

    # ------------------------------------------------------------------ setup
    def open(self) -> None:
        import duckdb

        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        self._con = con = duckdb.connect(self.path)
        con.execute(f"CREATE TABLE IF NOT EXISTS {MARKERS} (txn VARCHAR PRIMARY KEY)")
        exists = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [self.table.split(".")[-1]]
        ).fetchone()
        if not exists or not exists[0]:
            empty = self.arrow_schema.empty_table()  # noqa: F841 - read by the statement
            pk = f", PRIMARY KEY ({', '.join(_q(k) for k in self.key)})" if self.key else ""
            described = con.execute("DESCRIBE SELECT * FROM empty").fetchall()  # (name, type, ...)
            cols = ", ".join(f"{_q(row[0])} {row[1]}" for row in described)
            con.execute(f"CREATE TABLE {_q(self.table)} ({cols}{pk})")
        elif not self.key:
            rows = con.execute(
                "SELECT constraint_column_names FROM duckdb_constraints() "
                "WHERE table_name = ? AND constraint_type = 'PRIMARY KEY'",
                [self.table.split(".")[-1]],
            ).fetchall()
            if rows:
                self.key = list(rows[0][0])

    # ------------------------------------------------------------------ writing
    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if not self.key and batch.schema.get_field_index(ROW_KIND) >= 0:
            kinds = row_kinds(batch)
            if np.any((kinds == UPDATE_BEFORE) | (kinds == DELETE)):
                raise ConnectorError(
                    f"The 'duckdb' sink table '{self.table}' has no primary key, so it can only append; the input "
                    "contains update/delete changes. Declare a PRIMARY KEY (or 'sink.primary-key') to upsert."
                )
        self._buffer.append(batch)
        if not self.deferred_commit and time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def _take(self) -> pa.Table | None:
        if not self._buffer:
            return None
        batches, self._buffer = self._buffer, []
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
        self.flush()
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
        self._buffer = []
        self._disconnect()

    # ------------------------------------------------------------------ the transaction
    def _apply(self, tables: list[pa.Table | None], txns: list[str | None]) -> None:
        con = self._con
        assert con is not None, "the duckdb sink is not open"
        for rows, txn in zip(tables, txns, strict=True):
            con.execute("BEGIN TRANSACTION")
            try:
                if txn is not None:
                    done = con.execute(f"SELECT count(*) FROM {MARKERS} WHERE txn = ?", [txn]).fetchone()
                    if done and done[0]:
                        con.execute("ROLLBACK")
                        continue
                    con.execute(f"INSERT INTO {MARKERS} VALUES (?)", [txn])
                if rows is not None and rows.num_rows:
                    self._write_rows(con, rows)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise

    def _write_rows(self, con: Any, rows: pa.Table) -> None:
        kinds = rows.column(ROW_KIND).to_numpy()
        data = rows.drop_columns([ROW_KIND])
        cols = ", ".join(_q(n) for n in self.names)
        if not self.key:
            keep = (kinds == INSERT) | (kinds == UPDATE_AFTER)
            ins = data.filter(pa.array(keep))  # noqa: F841 - read by the statement
            con.execute(f"INSERT INTO {_q(self.table)} ({cols}) SELECT {cols} FROM ins")
            return
        # Last change per key wins (positions in commit order); -U rows carry no decision.
        sel = np.flatnonzero(kinds != UPDATE_BEFORE)
        data, kinds = data.take(pa.array(sel)), kinds[sel]
        pos = pa.array(np.arange(data.num_rows, dtype=np.int64))
        keyed = data.select(self.key).append_column("__pos", pos)
        last = keyed.group_by(self.key, use_threads=False).aggregate([("__pos", "max")])
        idx = np.sort(last.column("__pos_max").to_numpy())
        final = data.take(pa.array(idx))
        upsert = final.filter(pa.array(np.isin(kinds[idx], (INSERT, UPDATE_AFTER))))  # noqa: F841
        touched = final.select(self.key)  # noqa: F841 - read by the statement
        on = " AND ".join(f"t.{_q(k)} IS NOT DISTINCT FROM k.{_q(k)}" for k in self.key)
        con.execute(f"DELETE FROM {_q(self.table)} t USING touched k WHERE {on}")
        con.execute(f"INSERT INTO {_q(self.table)} ({cols}) SELECT {cols} FROM upsert")
