"""The 'duckdb' sink: rows into a table of a DuckDB database file.

Without checkpointing rows are committed every 'sink.buffer-flush.interval' (1 s, as
Flink's JDBC sink) and at end of input (at-least-once); with checkpointing exactly once by
two-phase commit: runtime.connectors.transactional_sink says how.

Append mode (no key) inserts +I/+U rows and refuses -U/-D. Upsert mode (a key from
'sink.primary-key', the planner, or the DuckDB table's PRIMARY KEY) applies a changelog:
per key the last change of the committed rows wins (+I/+U upsert, -D delete; -U is
implied by the following +U), done as one DELETE of the touched keys plus one INSERT.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, ROW_KIND, UPDATE_AFTER
from runtime.config import duration_ms
from runtime.connectors.base import SourceContext
from runtime.connectors.transactional_sink import MARKERS, TransactionalTableSink, last_per_key
from runtime.errors import ConnectorError
from runtime.map_values import external_type, has_map, to_external
from runtime.types import Field


def _q(name: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in name.split("."))


class DuckDBSink(TransactionalTableSink):
    connector = "duckdb"
    no_key_hint = "Declare a PRIMARY KEY (or 'sink.primary-key') to upsert."

    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        path, table = options.get("path"), options.get("table-name")
        if not path or not table:
            raise ConnectorError("The 'duckdb' sink needs the options 'path' and 'table-name'.")
        key = options.get("sink.primary-key") or options.get("$internal.primary-key") or ""
        super().__init__(table, schema, [k.strip() for k in key.split(",") if k.strip()], ctx)
        self.path = os.path.abspath(os.path.expanduser(path))
        interval = options.get("sink.buffer-flush.interval") or "1 s"
        self.flush_interval_s = (duration_ms(interval, "sink.buffer-flush.interval") or 0) / 1000
        # MAP columns go in as DuckDB MAPs (runtime/map_values.py)
        self.fields = tuple(schema)
        self.arrow_schema = pa.schema([pa.field(f.name, external_type(f.type)) for f in schema])

    # ------------------------------------------------------------------ setup
    def open(self) -> None:
        import duckdb

        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        try:
            self._con = con = duckdb.connect(self.path)
        except duckdb.IOException as e:  # permission denied, a directory, ...: name the file
            raise ConnectorError(f"Cannot open the DuckDB database '{self.path}' of the sink: {e}") from None
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

    def _due(self) -> bool:
        return time.monotonic() - self._last_flush >= self.flush_interval_s

    # ------------------------------------------------------------------ the transaction
    def _apply_one(self, rows: pa.Table | None, txn: str | None) -> None:
        con = self._con
        assert con is not None, "the duckdb sink is not open"
        con.execute("BEGIN TRANSACTION")
        try:
            if txn is not None:
                done = con.execute(f"SELECT count(*) FROM {MARKERS} WHERE txn = ?", [txn]).fetchone()
                if done and done[0]:
                    con.execute("ROLLBACK")
                    return
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
        if any(has_map(f.type) for f in self.fields):
            where = f"the DuckDB table '{self.table}'"
            cols_ = [to_external(c, f.type, where) for c, f in zip(data.columns, self.fields, strict=True)]
            data = pa.Table.from_arrays(cols_, names=data.column_names)
        cols = ", ".join(_q(n) for n in self.names)
        if not self.key:
            keep = (kinds == INSERT) | (kinds == UPDATE_AFTER)
            ins = data.filter(pa.array(keep))  # noqa: F841 - read by the statement
            con.execute(f"INSERT INTO {_q(self.table)} ({cols}) SELECT {cols} FROM ins")
            return
        final, final_kinds = last_per_key(data, kinds, self.key)
        upsert = final.filter(pa.array(np.isin(final_kinds, (INSERT, UPDATE_AFTER))))  # noqa: F841
        touched = final.select(self.key)  # noqa: F841 - read by the statement
        on = " AND ".join(f"t.{_q(k)} IS NOT DISTINCT FROM k.{_q(k)}" for k in self.key)
        con.execute(f"DELETE FROM {_q(self.table)} t USING touched k WHERE {on}")
        con.execute(f"INSERT INTO {_q(self.table)} ({cols}) SELECT {cols} FROM upsert")
