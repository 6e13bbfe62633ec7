"""A progress line for bounded jobs run from the CLI on a terminal: rows read by the
sources, out of the total when every source knows it (`Source.total_rows`). Nothing is
drawn when stderr is not a terminal, so piped output stays clean."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TextIO

from runtime.operators.source import TABLE_SOURCE_SCAN

Progress = tuple[int, int | None]


def source_progress(executor: Any) -> Progress:
    """(rows read so far, total rows or None) over the job's TableSourceScan operators."""
    if executor is None:
        return 0, None
    read, total, known = 0, 0, True
    for node in executor.graph.nodes:
        if not node.is_kind(TABLE_SOURCE_SCAN) or node.id not in executor.metrics:
            continue
        read += executor.metrics[node.id].rows_out
        source = getattr(executor.operators.get(node.id), "source", None)
        rows = _cached_total(source)
        if rows is None:
            known = False
        else:
            total += rows
    return read, (total if known else None)


def _cached_total(source: Any) -> int | None:
    if source is None:
        return None
    if not hasattr(source, "_progress_total"):
        try:
            source._progress_total = source.total_rows()  # noqa: SLF001 - computed once per source
        except Exception:  # noqa: BLE001 - a progress bar must never fail a job
            source._progress_total = None  # noqa: SLF001
    return source._progress_total  # noqa: SLF001


def render(read: int, total: int | None, width: int = 30) -> str:
    if not total:
        return f"{read:,} rows read"
    frac = min(read / total, 1.0)
    filled = int(frac * width)
    return f"[{'#' * filled}{'.' * (width - filled)}] {frac:6.1%}  {read:,}/{total:,} rows"


class ProgressBar:
    """Redraws one line on `stream` every `interval` seconds until stopped."""

    def __init__(self, stream: TextIO, progress: Callable[[], Progress], interval: float = 0.2) -> None:
        self.stream = stream
        self.progress = progress
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = 0

    @property
    def enabled(self) -> bool:
        return bool(getattr(self.stream, "isatty", lambda: False)())

    def __enter__(self) -> ProgressBar:
        if self.enabled:
            self._thread = threading.Thread(target=self._loop, name="progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            line = render(*self.progress())
            self.stream.write("\r" + line.ljust(self._drawn))
            self.stream.flush()
            self._drawn = max(self._drawn, len(line))
