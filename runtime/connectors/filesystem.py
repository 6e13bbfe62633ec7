"""The 'filesystem' connector: files in csv, json, debezium-json or parquet format.

Source: `path` is a file or a directory (relative paths resolve against the current
working directory). A directory is read file by file in name order, recursively,
skipping hidden ('.') and '_'-prefixed entries as Flink's default file filter does. One
split = one file; its offset is the format reader's offset. With
'source.monitor-interval' in STREAMING mode the source is unbounded and keeps
discovering files that appear later.

Sink: `path` is a directory; rows are written to part files named like Flink's
(`part-<uuid>-<subtask>-<n>.<ext>`), first as a hidden in-progress file. Without
checkpointing the file is renamed to its final name when it is finished: on rolling, at
end of input, or on `close()`. With checkpointing the sink is a two-phase-commit sink
(runtime.checkpoint.twophase): at the barrier the current file is closed and becomes
*pending* (still hidden), it is published (renamed) only when the checkpoint completes,
and a restore publishes the restored checkpoint's pending files and deletes every other
hidden file of this sink (work of checkpoints that never completed): exactly-once.
Append-only: a changelog input with update/delete rows is rejected.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, data_columns, row_kinds
from runtime.connectors.base import (
    ConfigOption,
    ConnectorFactory,
    Sink,
    Source,
    SourceContext,
    SplitReader,
    register_connector,
)
from runtime.connectors.formats import FileReader, FileWriter, all_format_options, get_format
from runtime.errors import ConnectorError
from runtime.graph import STREAMING
from runtime.types import Field

OPTIONS = (
    ConfigOption(
        "path",
        required=True,
        description="File or directory to read; directory to write part files into. Relative paths resolve against the working directory.",
    ),
    ConfigOption(
        "format",
        required=True,
        type="enum",
        values=("csv", "json", "debezium-json", "parquet"),
        description="Format of the files.",
    ),
    ConfigOption(
        "source.monitor-interval",
        type="duration",
        description="In STREAMING mode, how often to look for new files in the directory; the source is then unbounded. Unset: read the files present at start and finish.",
    ),
    ConfigOption(
        "sink.rolling-policy.file-size",
        default="128MB",
        description="Start a new part file once the current one has reached this size.",
    ),
    ConfigOption(
        "sink.rolling-policy.rollover-interval",
        type="duration",
        default="30 min",
        description="Start a new part file once the current one has been open this long.",
    ),
    ConfigOption(
        "partition.default-name",
        default="__DEFAULT_PARTITION__",
        description="Accepted for compatibility; partitioned tables are not supported yet.",
    ),
)

_UNITS_MS = {
    "ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "min": 60_000, "m": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
}  # fmt: skip
_SIZES = {"b": 1, "kb": 1 << 10, "k": 1 << 10, "mb": 1 << 20, "m": 1 << 20, "gb": 1 << 30, "g": 1 << 30}


def parse_duration_ms(text: str, key: str = "duration") -> int:
    """Flink duration text ('1 s', '100ms', '2 min', plain number = ms) → milliseconds."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _UNITS_MS and m.group(2):
        raise ConnectorError(
            f"Could not parse value '{text}' for key '{key}': expected a duration such as '1 s' or '100 ms'."
        )
    return int(m.group(1)) * (_UNITS_MS[m.group(2).lower()] if m.group(2) else 1)


def parse_size(text: str, key: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", text)
    if not m or (m.group(2) and m.group(2).lower() not in _SIZES):
        raise ConnectorError(f"Could not parse value '{text}' for key '{key}': expected a size such as '128MB'.")
    return int(m.group(1)) * (_SIZES[m.group(2).lower()] if m.group(2) else 1)


def _resolve(path: str | None) -> str:
    if not path:
        raise ConnectorError("Missing required option 'path' for connector 'filesystem'.")
    if path.startswith("file://"):
        path = path[len("file://") :]
    return os.path.abspath(os.path.expanduser(path))


def _visible(name: str) -> bool:
    return not (name.startswith(".") or name.startswith("_"))


def list_files(root: str) -> list[str]:
    """Files under `root` in name order (recursively), without hidden/'_' entries."""
    if os.path.isfile(root):
        return [root]
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if _visible(d))
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if _visible(f))
    return sorted(out)


def is_bounded(options: dict[str, str]) -> bool:
    """Bounded unless 'source.monitor-interval' is set (then unbounded in STREAMING mode)."""
    return not options.get("source.monitor-interval")


def changelog_mode(options: dict[str, str]) -> str:
    """The scan's changelog mode: 'I' or, for 'debezium-json', 'I,UB,UA,D'."""
    return "I,UB,UA,D" if get_format(options.get("format", "")).changelog else "I"


class FileSplitReader(SplitReader):
    """One file, read by its format's reader. `skipped_rows` counts rows dropped by
    'ignore-parse-errors'."""

    def __init__(self, reader: FileReader) -> None:
        self._reader = reader

    @property
    def skipped_rows(self) -> int:
        return self._reader.skipped_rows

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        return self._reader.read(max_rows)

    def offset(self) -> Any:
        return self._reader.offset()

    def seek(self, offset: Any) -> None:
        if offset is not None:
            self._reader.seek(offset)

    def close(self) -> None:
        self._reader.close()


class FilesystemSource(Source):
    def __init__(
        self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
    ) -> None:
        self.options = options
        self.schema = tuple(schema)
        self.projection = projection
        self.ctx = ctx
        self.root = _resolve(options.get("path"))
        self.format = get_format(options.get("format", ""))
        fields = [self.schema[i] for i in (range(len(self.schema)) if projection is None else projection)]
        self.produced_schema = tuple(fields)
        interval = options.get("source.monitor-interval")
        self.monitor_interval_ms = parse_duration_ms(interval, "source.monitor-interval") if interval else None
        self._known: set[str] = set()
        self._last_scan = 0.0
        if not os.path.exists(self.root) and self.monitor_interval_ms is None:
            raise ConnectorError(f"File or directory '{options.get('path')}' (resolved to {self.root}) does not exist.")

    @property
    def bounded(self) -> bool:
        return self.monitor_interval_ms is None or self.ctx.mode != STREAMING

    def _scan(self) -> list[str]:
        return list_files(self.root) if os.path.exists(self.root) else []

    def splits(self) -> list[str]:
        files = self._scan()
        self._known.update(files)
        self._last_scan = time.monotonic()
        return files

    def discover_splits(self) -> list[str]:
        if self.bounded:
            return []
        now = time.monotonic()
        if self.monitor_interval_ms and (now - self._last_scan) * 1000 < self.monitor_interval_ms:
            return []
        self._last_scan = now
        new = [f for f in self._scan() if f not in self._known]
        self._known.update(new)
        return new

    def create_reader(self, split_id: str) -> SplitReader:
        if not os.path.isfile(split_id):
            raise ConnectorError(f"File '{split_id}' of table path '{self.options.get('path')}' disappeared.")
        return FileSplitReader(self.format.open_reader(split_id, self.schema, self.projection, self.options, self.ctx))

    def total_rows(self) -> int | None:
        if self.format.name != "parquet" or not self.bounded:
            return None
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(f).metadata.num_rows for f in self._scan())


class FilesystemSink(Sink):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        self.options = options
        self.schema = tuple(schema)
        self.ctx = ctx
        self.root = _resolve(options.get("path"))
        self.format = get_format(options.get("format", ""))
        if self.format.open_writer is None:
            raise ConnectorError(f"The format '{self.format.name}' cannot be used to write a 'filesystem' sink.")
        self.roll_bytes = parse_size(
            options.get("sink.rolling-policy.file-size", "128MB"), "sink.rolling-policy.file-size"
        )
        self.roll_ms = parse_duration_ms(
            options.get("sink.rolling-policy.rollover-interval", "30 min"), "sink.rolling-policy.rollover-interval"
        )
        self.subtask = int(ctx.config.get("subtask.index", "0") or 0)
        self.uuid = str(uuid.uuid4())
        self._count = 0
        self._writer: FileWriter | None = None
        self._in_progress: str | None = None
        self._final: str | None = None
        self._opened_at = 0.0
        self.rows_written = 0
        self.finished_files: list[str] = []
        self.deferred_commit = False  # set by the Sink operator when checkpointing is on
        self._pending_files: list[tuple[str, str]] = []

    def open(self) -> None:
        if os.path.isfile(self.root):
            raise ConnectorError(
                f"The sink path '{self.options.get('path')}' is a file; the filesystem sink writes into a directory."
            )
        os.makedirs(self.root, exist_ok=True)

    def _new_file(self) -> FileWriter:
        name = f"part-{self.uuid}-{self.subtask}-{self._count}.{self.format.extension}"
        self._count += 1
        self._final = os.path.join(self.root, name)
        self._in_progress = os.path.join(self.root, f".{name}.inprogress.{uuid.uuid4()}")
        os.makedirs(self.root, exist_ok=True)
        self._writer = self.format.open_writer(self._in_progress, self.schema, self.options, self.ctx)  # type: ignore[misc]
        self._opened_at = time.monotonic()
        return self._writer

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.schema.get_field_index(ROW_KIND) >= 0:
            kinds = row_kinds(batch)
            if np.any(kinds != 0):
                raise ConnectorError(
                    f"The 'filesystem' sink at '{self.options.get('path')}' is append-only and doesn't support "
                    "consuming update and delete changes (the input contains -U/+U/-D rows)."
                )
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        writer = self._writer or self._new_file()
        writer.write(data)
        self.rows_written += data.num_rows
        if writer.bytes_written >= self.roll_bytes or (time.monotonic() - self._opened_at) * 1000 >= self.roll_ms:
            self._finish()

    def _finish(self) -> None:
        """Close the current part file: publish it now, or (deferred) keep it pending."""
        if self._writer is None:
            return
        self._writer.close()
        assert self._in_progress is not None and self._final is not None
        self._writer = None
        if self.deferred_commit:
            self._pending_files.append((self._in_progress, self._final))
            return
        os.replace(self._in_progress, self._final)
        self.finished_files.append(self._final)

    def flush(self) -> None:
        """Finish the current part file so it becomes visible (end of input)."""
        self._finish()

    def close(self) -> None:
        self._finish()

    # ------------------------------------------------------------------ two-phase commit
    def prepare_commit(self, checkpoint_id: int) -> list[tuple[str, str]]:
        """The barrier: close the current file; the files closed since the last checkpoint
        (pending, hidden) are this checkpoint's committable."""
        deferred, self.deferred_commit = self.deferred_commit, True
        self._finish()
        self.deferred_commit = deferred
        pending, self._pending_files = self._pending_files, []
        return pending

    def commit(self, committables: list[list[tuple[str, str]]]) -> None:
        """Publish pending files (rename to the final name). Idempotent: a file already
        renamed is skipped."""
        for files in committables:
            for hidden, final in files:
                if os.path.exists(hidden):
                    os.replace(hidden, final)
                    self.finished_files.append(final)
                elif not os.path.exists(final):
                    raise ConnectorError(
                        f"Cannot commit part file {final}: its pending file {hidden} is gone "
                        "(was the sink directory cleaned while the job was down?)"
                    )

    def snapshot_state(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "count": self._count}

    def _hidden_prefix(self) -> str:
        return f".part-{self.uuid}-{self.subtask}-"

    def restore_state(self, state: dict[str, Any] | None, committables: list[list[tuple[str, str]]]) -> None:
        """Resume the restored checkpoint: publish its pending files, then delete every
        other hidden file of this sink (uncommitted work of the failed attempt)."""
        if state:
            self.uuid = str(state["uuid"])
            self._count = int(state["count"])
        self.commit(committables)
        prefix = self._hidden_prefix()
        if os.path.isdir(self.root):
            for name in os.listdir(self.root):
                if name.startswith(prefix):
                    try:
                        os.remove(os.path.join(self.root, name))
                    except FileNotFoundError:
                        pass

    def abort(self) -> None:
        """Stopped without a final checkpoint: drop the file being written (pending files
        of completed-but-uncommitted checkpoints stay for the restore to publish)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            if self._in_progress and os.path.exists(self._in_progress):
                os.remove(self._in_progress)


FACTORY = register_connector(
    ConnectorFactory(
        name="filesystem",
        description="Reads and writes files in a local directory (csv, json, debezium-json, parquet).",
        options=OPTIONS + all_format_options(),
        create_source=FilesystemSource,
        create_sink=FilesystemSink,
        is_bounded=is_bounded,
        formats=("csv", "json", "debezium-json", "parquet"),
    )
)
