"""What the database table sinks ('jdbc', 'duckdb') share: buffering and two-phase commit.

Both write a changelog into a table of a transactional database the same way, and only
the statements differ, so the protocol lives here once:

- Without checkpointing, buffered rows are applied when the sink's flush rule says so
  (`_due`) and at end of input, one transaction each: at-least-once, like Flink's JDBC sink.
- With checkpointing (runtime.checkpoint.twophase) the rows between two barriers are handed
  to the checkpoint by `prepare_commit` (they are part of the snapshot, so nothing is lost
  if the process dies before the commit), and when the checkpoint completes `commit` applies
  them in ONE transaction together with a marker row `(txn)` in the side table
  `_streamsql_commits`. A commit replayed after a restore finds its marker and does nothing,
  so an append table holds every row exactly once and an upsert table is not rewound.

A subclass says how to open and close its connection and how to apply one transaction
(`_apply_one`); `last_per_key` is the upsert reduction both use.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import INSERT, ROW_KIND, UPDATE_BEFORE, data_columns, row_kinds
from runtime.connectors.base import Sink, SourceContext
from runtime.errors import ConnectorError
from runtime.types import Field

MARKERS = "_streamsql_commits"


def last_per_key(data: pa.Table, kinds: np.ndarray, key: list[str]) -> tuple[pa.Table, np.ndarray]:
    """The last change per key (in order), without -U rows (the following +U decides)."""
    sel = np.flatnonzero(kinds != UPDATE_BEFORE)
    data, kinds = data.take(pa.array(sel)), kinds[sel]
    pos = pa.array(np.arange(data.num_rows, dtype=np.int64))
    keyed = data.select(key).append_column("__pos", pos)
    last = keyed.group_by(key, use_threads=False).aggregate([("__pos", "max")])
    idx = np.sort(last.column("__pos_max").to_numpy())
    return data.take(pa.array(idx)), kinds[idx]


class TransactionalTableSink(Sink):
    """A changelog into one database table, at-least-once or exactly-once (see module doc)."""

    connector = ""  # the connector's name, for messages
    no_key_hint = ""  # how to declare a key, for the append-only refusal

    def __init__(self, table: str, schema: tuple[Field, ...], key: list[str], ctx: SourceContext) -> None:
        self.table = table
        self.schema = tuple(schema)
        self.names = [f.name for f in schema]
        self.key = key
        self.deferred_commit = False
        self.sink_id = ctx.config.get("$internal.sink-id") or "sink"
        self.txn_prefix = f"{self.sink_id}-{uuid.uuid4().hex}"
        self._buffer: list[pa.RecordBatch] = []
        self._buffered = 0
        self._last_flush = time.monotonic()
        self._con: Any = None

    # ------------------------------------------------------------------ what a subclass says
    def _due(self) -> bool:
        """Whether the buffer is to be written now (without checkpointing)."""
        raise NotImplementedError

    def _apply_one(self, rows: pa.Table | None, txn: str | None) -> None:
        """Apply `rows` in one transaction; with a `txn`, only if its marker is not there yet."""
        raise NotImplementedError

    # ------------------------------------------------------------------ writing
    def _refuse_changes(self, batch: pa.RecordBatch) -> None:
        """Without a key the table can only append: update/delete rows fail the job. Any
        kind but INSERT counts: an updating input may reach the sink without its -U rows
        (the planner drops UPDATE_BEFORE where no consumer needs it), so +U alone is an
        update too."""
        if not self.key and batch.schema.get_field_index(ROW_KIND) >= 0:
            kinds = row_kinds(batch)
            if np.any(kinds != INSERT):
                raise ConnectorError(
                    f"The '{self.connector}' sink table '{self.table}' has no PRIMARY KEY, so it can only append; "
                    f"the input contains update/delete changes. {self.no_key_hint}"
                )

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        self._refuse_changes(batch)
        self._buffer.append(batch)
        self._buffered += batch.num_rows
        if not self.deferred_commit and self._due():
            self.flush()

    def _take(self) -> pa.Table | None:
        """The buffered rows as one table of the sink's columns plus the row kind; empties the buffer."""
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

    def _apply(self, tables: list[pa.Table | None], txns: list[str | None]) -> None:
        for rows, txn in zip(tables, txns, strict=True):
            self._apply_one(rows, txn)

    def apply_transaction(self, rows: pa.Table, txn: str | None) -> None:
        """Apply `rows` (the sink's columns plus an int8 `__op`) now, in one transaction; with
        `txn`, only if its marker is not there yet. For a runner that batches by itself (the
        Spark runner's `foreachBatch`), bypassing the buffer."""
        for b in rows.to_batches():
            self._refuse_changes(b)
        self._apply_one(rows, txn)

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
