"""Runs a query's result iterator in a worker thread and hands the batches over.

Why a thread: the shell's main thread must stay free to react to Ctrl-C (tableau mode: a
KeyboardInterrupt while waiting on the queue) and to redraw the full-screen view while an
unbounded query keeps producing. The executor itself runs in the worker, so a Ctrl-C never
lands inside an operator; cancelling sets the query's stop event and the executor returns
at its next poll, closing its operators in the worker.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

_END = object()


class BatchPump:
    """`for batch in BatchPump(result): ...` (blocking, interruptible), or `drain()` without
    blocking (the table view). A failure of the query is re-raised in the consumer."""

    def __init__(self, result: Any, on_batch: Callable[[], None] | None = None) -> None:
        self.result = result
        self.on_batch = on_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.finished = False  # the worker is done (end of input, cancel or failure)
        self.error: BaseException | None = None
        self.canceled = False
        self._thread = threading.Thread(target=self._run, name="streamsql-result", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            for batch in self.result.batches():
                self._queue.put(batch)
                if self.on_batch is not None:
                    self.on_batch()
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            self._queue.put(e)
        finally:
            self._queue.put(_END)
            if self.on_batch is not None:
                self.on_batch()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        while True:
            try:
                # A timeout keeps the wait interruptible by Ctrl-C on every platform.
                item = self._queue.get(timeout=0.1)
            except queue.Empty:
                continue
            if item is _END:
                self.finished = True
                return
            if isinstance(item, BaseException):
                self.error = item
                raise item
            yield item

    def drain(self) -> list[pa.RecordBatch]:
        """Batches that arrived since the last call; raises the query's failure once."""
        out: list[pa.RecordBatch] = []
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return out
            if item is _END:
                self.finished = True
            elif isinstance(item, BaseException):
                self.error = item
            else:
                out.append(item)

    def cancel(self, wait_s: float = 10.0) -> None:
        """Stop the query and wait (briefly) for its operators to close."""
        if self._thread.is_alive():
            self.canceled = True  # a query that already ended was not canceled
        self.result.cancel()
        self._thread.join(wait_s)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
