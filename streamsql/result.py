"""TableResult: what `execute_sql` / `Table.execute()` return (PyFlink-shaped).

A query's result is a lazy iterator of changelog batches straight from the executor, so
`collect()` and `print()` show rows as they are produced, even for an unbounded job.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from enum import Enum
from typing import TYPE_CHECKING, Any, TextIO

import pyarrow as pa

from runtime.batch import ROW_KIND, data_columns, row_kinds
from runtime.map_values import has_map, pairs_form, to_external
from runtime.pandas_interop import import_pandas
from runtime.types import STRING, Field, arrow_schema
from streamsql.row import Row, RowKind

if TYPE_CHECKING:
    from streamsql.common import JobClient
    from streamsql.descriptors import TableSchema


class ResultKind(Enum):
    SUCCESS = "SUCCESS"
    SUCCESS_WITH_CONTENT = "SUCCESS_WITH_CONTENT"


class JobHandle:
    """A running INSERT job: wait for it, or cancel it."""

    def __init__(
        self,
        job_id: str,
        run: Callable[[threading.Event], None],
        name: str = "job",
        executor: Callable[[], Any] | None = None,
        bounded: bool = True,
    ) -> None:
        self.job_id = job_id
        # Whether every source of the job is bounded (the job ends by itself).
        self.bounded = bounded
        self._executor = executor or (lambda: None)
        self.name = name
        self.start_time = time.time()
        self.end_time: float | None = None
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.status = "RUNNING"
        self._thread = threading.Thread(target=self._main, args=(run,), name=f"job-{job_id}", daemon=True)
        self._thread.start()

    def _main(self, run: Callable[[threading.Event], None]) -> None:
        try:
            run(self.stop_event)
            self.status = "CANCELED" if self.stop_event.is_set() else "FINISHED"
        except BaseException as e:  # noqa: BLE001 - re-raised in wait()
            self.error = e
            self.status = "FAILED"
        finally:
            self.end_time = time.time()

    def is_running(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the job's thread without re-raising its failure (the shell's STOP JOB)."""
        self._thread.join(timeout)

    def wait(self, timeout: float | None = None) -> None:
        """Block until the job ends (Ctrl-C stops it cleanly); re-raise its failure."""
        try:
            while self._thread.is_alive():
                self._thread.join(timeout=0.1 if timeout is None else timeout)
                if timeout is not None:
                    break
        except KeyboardInterrupt:
            self.cancel()
            self._thread.join()
        if self.error is not None:
            raise self.error

    def cancel(self) -> None:
        self.stop_event.set()

    def trigger_savepoint(self, directory: str | None = None, timeout: float | None = 60.0) -> str:
        """Take a savepoint of the running job (into `directory`, default
        `execution.checkpointing.savepoint-dir`); returns its path once complete."""
        return self._savepoint(directory, stop=False, timeout=timeout)

    def stop_with_savepoint(
        self, directory: str | None = None, timeout: float | None = 60.0, drain: bool = False
    ) -> str:
        """STOP JOB ... WITH SAVEPOINT: take a savepoint, commit the sinks up to it, stop
        the job (nothing after the savepoint's barrier is processed); returns the
        savepoint's path (`execution.savepoint.path` restores it). `drain` (WITH DRAIN):
        the sources send MAX_WATERMARK first, so every window fires before the savepoint
        (for a job that ends for good: a run restored from it starts past the end of
        event time)."""
        path = self._savepoint(directory, stop=True, timeout=timeout, drain=drain)
        self._thread.join(timeout)
        return path

    def _savepoint(self, directory: str | None, stop: bool, timeout: float | None, drain: bool = False) -> str:
        deadline = time.monotonic() + (timeout or 60.0)
        executor = self._executor()
        while executor is None and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
            executor = self._executor()
        if executor is None or not self._thread.is_alive():
            raise RuntimeError(f"Job '{self.job_id}' is not running ({self.status}): no savepoint can be taken.")
        future = executor.trigger_savepoint(directory, stop=stop, drain=drain)
        return str(future.result(timeout=max(0.0, deadline - time.monotonic()) if timeout else None))

    def metrics(self) -> list[dict[str, Any]]:
        """Per-operator statistics (streamsql.stats.operator_metrics) of the running job."""
        from streamsql.stats import operator_metrics

        return operator_metrics(self._executor())

    def get_job_id(self) -> str:
        return self.job_id

    def get_job_status(self) -> str:
        return self.status


class CloseableIterator:
    """PyFlink's CloseableIterator: an iterator over result rows that stops the running
    query when closed, also as a context manager."""

    def __init__(self, rows: Iterator[Row], on_close: Callable[[], None]) -> None:
        self._rows = rows
        self._on_close = on_close
        self._closed = False

    def __iter__(self) -> CloseableIterator:
        return self

    def __next__(self) -> Row:
        if self._closed:
            raise StopIteration
        return next(self._rows)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._on_close()
            close = getattr(self._rows, "close", None)
            if close is not None:
                close()

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TableResult:
    def __init__(
        self,
        fields: tuple[Field, ...],
        batches: Callable[[], Iterator[pa.RecordBatch]] | None = None,
        *,
        kind: ResultKind = ResultKind.SUCCESS_WITH_CONTENT,
        streaming: bool = False,
        time_zone: str = "UTC",
        changelog_mode: str = "I",
        job: JobHandle | None = None,
        stop_event: threading.Event | None = None,
        watermark: Callable[[], int | None] | None = None,
        executor: Callable[[], Any] | None = None,
    ) -> None:
        self.fields = fields
        self._executor = executor
        self._watermark = watermark
        self._batches = batches
        self.kind = kind
        self.streaming = streaming
        self.time_zone = time_zone
        self.changelog_mode = changelog_mode
        self.job = job
        self.stop_event = stop_event
        self._consumed = False

    # ------------------------------------------------------------------ construction
    @staticmethod
    def ok() -> TableResult:
        return TableResult.of_rows((Field("result", STRING()),), [("OK",)], kind=ResultKind.SUCCESS)

    @staticmethod
    def of_rows(
        fields: tuple[Field, ...], rows: list[tuple[Any, ...]], kind: ResultKind = ResultKind.SUCCESS_WITH_CONTENT
    ) -> TableResult:
        schema = arrow_schema(fields)
        table = pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)

        def gen() -> Iterator[pa.RecordBatch]:
            yield from table.to_batches()

        return TableResult(fields, gen, kind=kind)

    # ------------------------------------------------------------------ PyFlink API
    def get_result_kind(self) -> ResultKind:
        return self.kind

    def get_table_schema(self) -> TableSchema:
        """The result's columns (PyFlink's TableSchema; still a tuple of Fields)."""
        from streamsql.descriptors import TableSchema

        return TableSchema(self.fields)

    def get_job_client(self) -> JobClient | None:
        """PyFlink's JobClient of the job behind this result (None for DDL and queries that
        are not jobs)."""
        from streamsql.common import JobClient

        return None if self.job is None else JobClient(self.job)

    def get_resolved_schema(self) -> TableSchema:
        from streamsql.descriptors import TableSchema

        return TableSchema(self.fields).resolved()

    def wait(self, timeout_ms: int | None = None) -> None:
        if self.job is not None:
            self.job.wait(None if timeout_ms is None else timeout_ms / 1000)

    def current_watermark(self) -> int | None:
        """The running query's latest result watermark (epoch ms), None when there is none
        (yet, or for batch and non-query results); MAX_WATERMARK once the input ended."""
        return self._watermark() if self._watermark is not None else None

    def metrics(self) -> list[dict[str, Any]]:
        """Per-operator statistics of the job behind this result (streamsql.stats), [] when
        there is none (yet)."""
        from streamsql.stats import operator_metrics

        if self._executor is not None:
            return operator_metrics(self._executor())
        return self.job.metrics() if self.job is not None else []

    def batches(self) -> Iterator[pa.RecordBatch]:
        """The raw changelog batches (data columns + `__op`). A result can be read once."""
        if self._batches is None:
            return iter(())
        if self._consumed:
            raise RuntimeError("this result was already consumed; execute the query again")
        self._consumed = True
        return self._batches()

    def collect(self) -> CloseableIterator:
        """Rows with their row kind as they arrive (also for unbounded queries). Close it
        (or use `with result.collect() as rows:`) to stop the query early."""
        names = tuple(f.name for f in self.fields)
        # MAP values as (key, value) pairs, NULL keys included (runtime/map_values.py)
        maps = [i for i, f in enumerate(self.fields) if has_map(f.type)]

        def rows() -> Iterator[Row]:
            for batch in self.batches():
                kinds = row_kinds(batch)
                cols = data_columns(batch).to_pylist()
                for kind, rec in zip(kinds, cols, strict=True):
                    values = tuple(rec.values())
                    if maps:
                        values = tuple(
                            pairs_form(v, self.fields[i].type) if i in maps else v for i, v in enumerate(values)
                        )
                    yield Row.of(values, names, RowKind(int(kind)), anonymous=True)  # PyFlink's have no names

        return CloseableIterator(rows(), self.cancel)

    def print(self, out: TextIO | None = None, max_width: int = 30) -> None:
        """Print the rows as PyFlink's `TableResult.print()` does (streamsql.tableau); the
        SQL client and `streamsql -f` print the SQL client's layout instead."""
        from streamsql.tableau import print_tableau

        print_tableau(
            self.fields,
            self.batches(),
            out or sys.stdout,
            streaming=self.streaming,
            time_zone=self.time_zone,
            max_width=max_width,
        )

    def to_arrow(self) -> pa.Table:
        """The final table: the changelog applied (updates and deletes folded in). MAP
        columns are Arrow maps (a NULL key, which those cannot hold, fails naming the
        column; runtime/map_values.py)."""
        table = self._final_table()
        if not any(has_map(f.type) for f in self.fields):
            return table
        cols = [
            to_external(c, f.type, f"to_arrow(), column '{f.name}'")
            for c, f in zip(table.columns, self.fields, strict=True)
        ]
        return pa.Table.from_arrays(cols, names=table.column_names)

    def _final_table(self) -> pa.Table:
        # Nullable fields: batches do not all carry NOT NULL flags, and the values are right.
        schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.fields])
        batches = list(self.batches())
        if not batches:
            return schema.empty_table()
        if all(b.schema.get_field_index(ROW_KIND) < 0 or not row_kinds(b).any() for b in batches):
            return pa.Table.from_batches([data_columns(b) for b in batches]).rename_columns(schema.names).cast(schema)
        counts: Counter[tuple[Any, ...]] = Counter()
        order: dict[tuple[Any, ...], None] = {}
        for b in batches:
            kinds = row_kinds(b)
            for kind, rec in zip(kinds, data_columns(b).to_pylist(), strict=True):
                key = tuple(rec.values())
                if kind in (0, 2):
                    counts[key] += 1
                    order.setdefault(key, None)
                else:
                    counts[key] -= 1
        rows = [k for k in order for _ in range(max(counts[k], 0))]
        return pa.Table.from_pylist([dict(zip(schema.names, r, strict=True)) for r in rows], schema=schema)

    def to_pandas(self) -> Any:
        import_pandas()  # pyarrow's pandas integration on (runtime/pandas_interop.py)
        return self.to_arrow().to_pandas()

    def cancel(self) -> None:
        if self.stop_event is not None:
            self.stop_event.set()
        if self.job is not None:
            self.job.cancel()
