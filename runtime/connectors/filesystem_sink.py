"""The filesystem connector's sink: part files, optionally in Hive-style partitions.

`path` is a directory; rows are written to part files named like Flink's
(`part-<uuid>-<subtask>-<n>.<ext>`), first as a hidden in-progress file. A `PARTITIONED BY
(dt, hr)` table writes into `<path>/dt=<v>/hr=<v>/` with the partition columns left out of
the files (runtime/connectors/filesystem_partitions.py); one file is open per partition
the sink is writing to, and the part counter is shared by all of them (names stay unique).

Without checkpointing a file is renamed to its final name when it is finished: on
rolling, at end of input, or on `close()`. With checkpointing the sink is a
two-phase-commit sink (runtime.checkpoint.twophase): at the barrier every open file is
closed and becomes *pending* (still hidden), it is published (renamed) only when the
checkpoint completes, and a restore publishes the restored checkpoint's pending files
and deletes every other hidden file of this sink, in every partition directory (work of
checkpoints that never completed): exactly-once. With a changelog format (canal-json,
debezium-json, ...) every row kind is written, as the format's change event (the batches
handed to its writer keep `__op`); with any other format the sink appends inserts only.

Partition commit (Flink's `sink.partition-commit.*`): with the policy `success-file`, a
partition gets an empty `_SUCCESS` file (`sink.partition-commit.success-file.name`) once
files of it were published and `sink.partition-commit.delay` has passed since the sink
first wrote to it (the `process-time` trigger, checked at each publication), or once the
watermark passed the partition's time plus the delay (the `partition-time` trigger:
runtime/connectors/filesystem_commit.py), and at the end of input for every partition
written.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND, data_columns, row_kinds
from runtime.connectors.base import Sink, SourceContext, parse_duration_ms, parse_size
from runtime.connectors.filesystem_commit import PartitionTimeTrigger
from runtime.connectors.filesystem_partitions import (
    DEFAULT_PARTITION_NAME,
    partition_dirs,
    partition_keys,
    partition_values,
    split_by_partition,
    split_schema,
)
from runtime.connectors.filesystem_paths import resolve_path
from runtime.connectors.formats import FileWriter, get_format
from runtime.errors import ConnectorError
from runtime.frozen import mutable_dataclass
from runtime.types import Field


@mutable_dataclass
class _OpenFile:
    writer: FileWriter
    in_progress: str
    final: str
    opened_at: float
    written_at: float  # when rows were last written (the inactivity policy)


class FilesystemSink(Sink):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext) -> None:
        self.options = options
        self.schema = tuple(schema)
        self.ctx = ctx
        self.root = resolve_path(options.get("path"))
        self.format = get_format(options.get("format", ""))
        if self.format.open_writer is None:
            raise ConnectorError(f"The format '{self.format.name}' cannot be used to write a 'filesystem' sink.")
        self.roll_bytes = parse_size(
            options.get("sink.rolling-policy.file-size", "128MB"), "sink.rolling-policy.file-size"
        )
        self.roll_ms = parse_duration_ms(
            options.get("sink.rolling-policy.rollover-interval", "30 min"), "sink.rolling-policy.rollover-interval"
        )
        self.inactivity_ms = parse_duration_ms(
            options.get("sink.rolling-policy.inactivity-interval", "30 min"), "sink.rolling-policy.inactivity-interval"
        )
        self.check_ms = parse_duration_ms(
            options.get("sink.rolling-policy.check-interval", "1 min"), "sink.rolling-policy.check-interval"
        )
        self._last_check = time.monotonic()
        # 'auto-compaction': the files of a checkpoint (of the whole input without checkpoints)
        # are merged per directory into files of about 'compaction.file-size' before they appear
        self.compaction = (options.get("auto-compaction") or "false").strip().lower() == "true"
        target = options.get("compaction.file-size") or options.get("sink.rolling-policy.file-size", "128MB")
        self.compaction_bytes = parse_size(target, "compaction.file-size")
        self._to_compact: list[tuple[str, str]] = []
        self.partition_keys = partition_keys(options)
        self.default_partition = options.get("partition.default-name") or DEFAULT_PARTITION_NAME
        if self.partition_keys:
            self.data_idx, self.part_idx = split_schema(self.schema, self.partition_keys)
        else:
            self.data_idx, self.part_idx = list(range(len(self.schema))), []
        self.file_schema = tuple(self.schema[i] for i in self.data_idx)
        self._init_partition_commit(options)
        self.subtask = int(ctx.config.get("subtask.index", "0") or 0)
        self.uuid = str(uuid.uuid4())
        self._count = 0
        self._open: dict[str, _OpenFile] = {}  # partition directory ("" = the root) -> file being written
        self.rows_written = 0
        self.finished_files: list[str] = []
        self.deferred_commit = False  # set by the Sink operator when checkpointing is on
        self._pending_files: list[tuple[str, str]] = []
        self._created: dict[str, float] = {}  # partition -> when this sink first wrote to it
        self._published: set[str] = set()  # partitions with published files and no success file yet
        self.committed_partitions: list[str] = []

    def _init_partition_commit(self, options: dict[str, str]) -> None:
        kinds = [k.strip().lower() for k in (options.get("sink.partition-commit.policy.kind") or "").split(",")]
        kinds = [k for k in kinds if k]
        if (options.get("partition.time-extractor.kind") or "default").strip().lower() != "default" or options.get(
            "partition.time-extractor.class"
        ):
            raise ConnectorError(
                "A custom partition time extractor ('partition.time-extractor.kind' / "
                "'partition.time-extractor.class') is a Java class, which streamsql cannot run. Use the "
                "default extractor with 'partition.time-extractor.timestamp-pattern' (e.g. '$dt $hour:00:00')."
            )
        for k in kinds:
            if k == "metastore":
                raise ConnectorError(
                    "The 'metastore' partition commit policy needs a metastore; a filesystem table has none. "
                    "Use 'success-file'."
                )
            if k == "custom":
                cls = options.get("sink.partition-commit.policy.class") or "(unset)"
                raise ConnectorError(
                    f"The 'custom' partition commit policy runs the Java class "
                    f"'sink.partition-commit.policy.class' = '{cls}', which streamsql cannot run. Use "
                    "'success-file'."
                )
            if k != "success-file":
                raise ConnectorError(
                    f"Partition commit policy '{k}' is not supported: streamsql supports 'success-file'."
                )
        trigger = (options.get("sink.partition-commit.trigger") or "process-time").strip().lower()
        if trigger not in ("process-time", "partition-time"):
            raise ConnectorError(
                f"Invalid value for option 'sink.partition-commit.trigger': '{trigger}' "
                "(one of process-time, partition-time)."
            )
        if kinds and not self.partition_keys:
            raise ConnectorError("'sink.partition-commit.policy.kind' needs a PARTITIONED BY table.")
        self.success_file = "success-file" in kinds
        self.success_name = options.get("sink.partition-commit.success-file.name") or "_SUCCESS"
        self.commit_delay_ms = parse_duration_ms(options.get("sink.partition-commit.delay") or "0", "delay")
        self.commit_delay_s = self.commit_delay_ms / 1000
        # 'partition-time': commit when the watermark passes the partition's time plus the delay
        time_trigger = PartitionTimeTrigger(options, self.partition_keys)  # checks the time zone, as Flink does
        self.time_trigger = time_trigger if trigger == "partition-time" else None
        self._watermark: int | None = None  # the input's watermark (ms)
        self._commit_watermark: int | None = None  # the watermark at the last checkpoint barrier

    def open(self) -> None:
        if os.path.isfile(self.root):
            raise ConnectorError(
                f"The sink path '{self.options.get('path')}' is a file; the filesystem sink writes into a directory."
            )
        os.makedirs(self.root, exist_ok=True)

    def _new_file(self, partition: str) -> _OpenFile:
        name = f"part-{self.uuid}-{self.subtask}-{self._count}.{self.format.extension}"
        self._count += 1
        directory = os.path.join(self.root, partition) if partition else self.root
        os.makedirs(directory, exist_ok=True)
        hidden = os.path.join(directory, f".{name}.inprogress.{uuid.uuid4()}")
        writer = self.format.open_writer(hidden, self.file_schema, self.options, self.ctx)  # type: ignore[misc]
        now = time.monotonic()
        f = _OpenFile(writer, hidden, os.path.join(directory, name), now, now)
        self._open[partition] = f
        self._created.setdefault(partition, time.time())
        return f

    def write(self, batch: pa.RecordBatch) -> None:
        kinds: pa.Array | None = None
        if self.format.changelog:  # every row kind: the format's writer turns each into its event
            kinds = pa.array(row_kinds(batch), pa.int8())
        elif batch.schema.get_field_index(ROW_KIND) >= 0 and np.any(row_kinds(batch) != 0):
            raise ConnectorError(
                f"The 'filesystem' sink at '{self.options.get('path')}' is append-only with format "
                f"'{self.format.name}' and doesn't support consuming update and delete changes (the input contains "
                "-U/+U/-D rows)."
            )
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        self.rows_written += data.num_rows
        if not self.part_idx and kinds is None:
            self._write_to("", data)
            return
        columns, names = [data.column(i) for i in self.data_idx], [data.schema.names[i] for i in self.data_idx]
        if kinds is not None:
            columns.append(kinds)
            names.append(ROW_KIND)
        rows = pa.RecordBatch.from_arrays(columns, names=names)
        if not self.part_idx:
            self._write_to("", rows)
            return
        dirs = partition_dirs(data, self.part_idx, self.schema, self.default_partition, self.ctx.time_zone)
        for partition, part_rows in split_by_partition(rows, dirs):  # a loop over the batch's partitions
            self._write_to(partition, part_rows)

    def _write_to(self, partition: str, rows: pa.RecordBatch) -> None:
        f = self._open.get(partition) or self._new_file(partition)
        f.writer.write(rows)
        f.written_at = time.monotonic()
        if f.writer.bytes_written >= self.roll_bytes or (f.written_at - f.opened_at) * 1000 >= self.roll_ms:
            self._finish(partition)

    def on_timer(self) -> None:
        """No rows for a while: every 'sink.rolling-policy.check-interval', roll the part files
        open longer than the rollover interval or idle longer than the inactivity interval."""
        now = time.monotonic()
        if (now - self._last_check) * 1000 < self.check_ms:
            return
        self._last_check = now
        for partition, f in list(self._open.items()):
            if (now - f.opened_at) * 1000 >= self.roll_ms or (now - f.written_at) * 1000 >= self.inactivity_ms:
                self._finish(partition)

    def _finish(self, partition: str) -> None:
        """Close a partition's current part file: publish it now, or (deferred) keep it pending."""
        f = self._open.pop(partition, None)
        if f is None:
            return
        f.writer.close()
        if self.deferred_commit:
            self._pending_files.append((f.in_progress, f.final))
            return
        if self.compaction:  # compacted at the end of input
            self._to_compact.append((f.in_progress, f.final))
            return
        self._publish(f.in_progress, f.final)
        self._commit_partitions(force=False)

    def _finish_all(self) -> None:
        for partition in list(self._open):
            self._finish(partition)

    def _publish(self, hidden: str, final: str) -> None:
        os.replace(hidden, final)
        self.finished_files.append(final)
        if self.part_idx:
            self._published.add(os.path.relpath(os.path.dirname(final), self.root))

    def _commit_partitions(self, force: bool) -> None:
        """The success-file policy: partitions whose files were published and whose trigger
        fired (all of them at end of input). 'process-time': the delay has passed since the
        sink first wrote to the partition; 'partition-time': the watermark (the one of the
        last checkpoint barrier when checkpointing) has passed the partition's time plus
        the delay."""
        if not self.success_file or not self._published:
            return
        now = time.time()
        watermark = self._commit_watermark if self.deferred_commit else self._watermark
        for partition in sorted(self._published):
            if force:
                due = True
            elif self.time_trigger is None:
                due = now >= self._created.get(partition, now) + self.commit_delay_s
            elif watermark is None:
                due = False
            else:
                values = partition_values(self.root, os.path.join(self.root, partition, "_"))
                at = self.time_trigger.partition_time_ms([values.get(k, "") for k in self.partition_keys])
                due = self.time_trigger.watermark_wall_ms(watermark) >= at + self.commit_delay_ms
            if due:
                with open(os.path.join(self.root, partition, self.success_name), "wb"):
                    pass
                self._published.discard(partition)
                self.committed_partitions.append(partition)

    def on_watermark(self, watermark: int) -> None:
        """'partition-time': without checkpointing, published partitions may commit now
        (with checkpointing they commit when a checkpoint completes)."""
        self._watermark = watermark
        if self.time_trigger is not None and not self.deferred_commit:
            self._commit_partitions(force=False)

    def flush(self) -> None:
        """Finish the current part files so they become visible (end of input)."""
        self._finish_all()
        self._compact_pending()
        self._commit_partitions(force=True)

    def close(self) -> None:
        self._finish_all()
        self._compact_pending()
        self._commit_partitions(force=True)

    def _compact_pending(self) -> None:
        if self._to_compact:
            files, self._to_compact = self._to_compact, []
            self._compact(files)

    # ------------------------------------------------------------------ compaction
    def _compact(self, files: list[tuple[str, str]]) -> None:
        """'auto-compaction': publish `files` (hidden, final) merged per directory, in final-name
        order, into bins of at least 'compaction.file-size' (the last bin smaller), each as
        `compacted-<first file's name>`; a bin of one file is renamed. Idempotent (a restore
        commits again): a bin whose output exists only has its leftover inputs deleted, and
        its inputs are deleted only after the output is in place."""
        by_dir: dict[str, list[tuple[str, str]]] = {}
        for hidden, final in files:
            if os.path.exists(hidden):  # gone: compacted by an earlier attempt
                by_dir.setdefault(os.path.dirname(final), []).append((hidden, final))
        for directory, group in sorted(by_dir.items()):
            group.sort(key=lambda hf: hf[1])
            bins: list[list[tuple[str, str]]] = [[]]
            size = 0
            for hidden, final in group:
                if size >= self.compaction_bytes and bins[-1]:
                    bins.append([])
                    size = 0
                bins[-1].append((hidden, final))
                size += os.path.getsize(hidden)
            for b in bins:
                target = os.path.join(directory, "compacted-" + os.path.basename(b[0][1]))
                if not os.path.exists(target):
                    if len(b) == 1:
                        os.replace(b[0][0], target)
                    else:
                        self._merge([h for h, _ in b], directory, target)
                for hidden, _ in b:
                    if os.path.exists(hidden):
                        os.remove(hidden)
                self.finished_files.append(target)
                if self.part_idx:
                    self._published.add(os.path.relpath(directory, self.root))

    def _merge(self, inputs: list[str], directory: str, target: str) -> None:
        """Write `inputs` into one hidden file, then move it to `target`. Text formats (one row
        per line) are concatenated; columnar ones are read back and rewritten by the format."""
        temp = os.path.join(directory, f"{self._hidden_prefix()}compacting-{uuid.uuid4()}")
        if self.format.extension in ("csv", "json"):
            with open(temp, "wb") as out:
                for path in inputs:
                    with open(path, "rb") as f:
                        out.write(f.read())
        else:
            writer = self.format.open_writer(temp, self.file_schema, self.options, self.ctx)  # type: ignore[misc]
            for path in inputs:
                reader = self.format.open_reader(path, self.file_schema, None, self.options, self.ctx)
                while (batch := reader.read(65536)) is not None:
                    writer.write(batch)
                reader.close()
            writer.close()
        os.replace(temp, target)

    # ------------------------------------------------------------------ two-phase commit
    def prepare_commit(self, checkpoint_id: int) -> list[tuple[str, str]]:
        """The barrier: close the open files; the files closed since the last checkpoint
        (pending, hidden) are this checkpoint's committable."""
        deferred, self.deferred_commit = self.deferred_commit, True
        self._commit_watermark = self._watermark
        self._finish_all()
        self.deferred_commit = deferred
        pending, self._pending_files = self._pending_files, []
        return pending

    def commit(self, committables: list[list[tuple[str, str]]]) -> None:
        """Publish pending files (rename to the final name; with 'auto-compaction', merged
        first). Idempotent: a file already renamed is skipped."""
        if self.compaction:
            self._compact([f for files in committables for f in files])
            self._commit_partitions(force=False)
            return
        for files in committables:
            for hidden, final in files:
                if os.path.exists(hidden):
                    self._publish(hidden, final)
                elif not os.path.exists(final):
                    raise ConnectorError(
                        f"Cannot commit part file {final}: its pending file {hidden} is gone "
                        "(was the sink directory cleaned while the job was down?)"
                    )
        self._commit_partitions(force=False)

    def snapshot_state(self) -> dict[str, Any]:
        return {"uuid": self.uuid, "count": self._count}

    def _hidden_prefix(self) -> str:
        return f".part-{self.uuid}-{self.subtask}-"

    def restore_state(self, state: dict[str, Any] | None, committables: list[list[tuple[str, str]]]) -> None:
        """Resume the restored checkpoint: publish its pending files, then delete every
        other hidden file of this sink (uncommitted work of the failed attempt), in the
        root and in every partition directory."""
        if state:
            self.uuid = str(state["uuid"])
            self._count = int(state["count"])
        self.commit(committables)
        prefix = self._hidden_prefix()
        for dirpath, _dirs, names in os.walk(self.root):
            for name in names:
                if name.startswith(prefix):
                    try:
                        os.remove(os.path.join(dirpath, name))
                    except FileNotFoundError:
                        pass

    def abort(self) -> None:
        """Stopped without a final checkpoint: drop the files being written (pending files
        of completed-but-uncommitted checkpoints stay for the restore to publish)."""
        for f in self._open.values():
            f.writer.close()
            if os.path.exists(f.in_progress):
                os.remove(f.in_progress)
        self._open = {}
