"""The 'print' connector: writes every row to stdout (or stderr) as Flink's print sink
does, `+I[1, apple, 2024-01-01 00:00:00.000]`, with an optional 'print-identifier'
prefix (`id> +I[...]`; `id:N> +I[...]` from writer subtask N at a parallelism above 1). Values use the SQL client's text (`runtime.render`), NULL as
`NULL`; the row kind comes from the `__op` column (absent = +I).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import ROW_KIND_NAMES, data_columns, row_kinds
from runtime.connectors.base import (
    SINK_PARALLELISM,
    SINK_SUBTASKS,
    SUBTASK_INDEX,
    ConfigOption,
    ConnectorFactory,
    Sink,
    SourceContext,
    register_connector,
)
from runtime.connectors.formats import opt_bool
from runtime.render import render_array
from runtime.types import Field

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "print-identifier",
        description="Prefix of every printed line: '<identifier>> +I[...]'. At a sink parallelism above 1 (its "
        "'sink.parallelism', else the job's) each line also names its writer subtask, counted from 1, as Flink "
        "does: '<identifier>:2> +I[...]', or '2> +I[...]' without an identifier.",
    ),
    ConfigOption(
        "standard-error",
        type="boolean",
        default="false",
        description="Print to standard error instead of standard output.",
    ),
    SINK_PARALLELISM,
)


class PrintSink(Sink):
    def __init__(
        self, options: dict[str, str], schema: tuple[Field, ...], ctx: SourceContext, stream: TextIO | None = None
    ) -> None:
        self.schema = tuple(schema)
        self.time_zone = ctx.time_zone
        # Flink's prefix (PrintSinkOutputWriter): '<identifier>> ', and with several writer
        # subtasks ('sink.parallelism', else the job's parallelism, above 1)
        # '<identifier>:<subtask + 1>> ' or '<subtask + 1>> '.
        self.identifier = options.get("print-identifier") or ""
        self.subtasks = int(ctx.config.get(SINK_SUBTASKS) or 1)
        self.prefix = self._prefix(int(ctx.config.get(SUBTASK_INDEX) or 0))
        self.to_stderr = opt_bool(options, "standard-error")
        self._stream = stream
        self.rows_written = 0

    def _prefix(self, subtask: int) -> str:
        prefix = self.identifier
        if self.subtasks > 1:
            prefix += (":" if prefix else "") + str(subtask + 1)
        return f"{prefix}> " if prefix else ""

    @property
    def stream(self) -> TextIO:
        if self._stream is not None:
            return self._stream
        return sys.stderr if self.to_stderr else sys.stdout

    def lines(self, batch: pa.RecordBatch, prefix: str | None = None) -> list[str]:
        """The printed text of each row of `batch` (each line starts with `prefix`, by
        default this writer's)."""

        prefix = self.prefix if prefix is None else prefix
        data = data_columns(batch)
        kinds = pa.array(row_kinds(batch)).cast(pa.int32())
        labels = pc.take(pa.array([f"{prefix}{k}[" for k in ROW_KIND_NAMES]), kinds)
        cols = [
            pc.fill_null(render_array(data.column(i), f.type, self.time_zone), "NULL")
            for i, f in enumerate(self.schema)
        ]
        if cols:
            body = pc.binary_join_element_wise(*cols, ", ") if len(cols) > 1 else cols[0]
        else:
            body = pa.array([""] * data.num_rows)
        return pc.binary_join_element_wise(labels, body, "]", "").to_pylist()

    def write(self, batch: pa.RecordBatch) -> None:
        self._print(batch, self.prefix)

    def write_for(self, batch: pa.RecordBatch, subtask: int) -> None:
        """One print sink for every subtask (run once in a parallel run's parent process):
        each batch's lines name the subtask that wrote it, as Flink's writers do."""
        self._print(batch, self._prefix(subtask))

    def _print(self, batch: pa.RecordBatch, prefix: str) -> None:
        if batch.num_rows == 0:
            return
        out = self.stream
        out.write("\n".join(self.lines(batch, prefix)) + "\n")
        out.flush()
        self.rows_written += batch.num_rows


FACTORY = register_connector(
    ConnectorFactory(
        name="print",
        description="Prints every row, with its row kind, to standard output (or standard error).",
        options=OPTIONS,
        create_sink=PrintSink,
    )
)
