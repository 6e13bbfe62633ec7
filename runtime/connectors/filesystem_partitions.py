"""Hive-style partitions of the filesystem connector (`PARTITIONED BY (dt, hr)`).

Flink lays a partitioned table out as `<path>/dt=2024-01-01/hr=10/part-...`: the partition
columns live in the directory names, not in the files (for every format), values are
escaped as Hive/Flink escape path names (`PartitionPathUtils.escapePathName`), and a NULL
or blank value becomes `partition.default-name` (`__DEFAULT_PARTITION__`). The planner
passes the partition columns as the internal option `$internal.partition-keys`.

The sink computes each row's partition directory for a whole batch with Arrow compute and
splits the batch by it (a loop over the distinct partitions of the batch, not over rows);
the source reads `k=v` directory names back into constant columns per file.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.base import SplitReader
from runtime.errors import ConnectorError
from runtime.render import render_array
from runtime.types import Field

PARTITION_KEYS = "$internal.partition-keys"
DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

# Hive's FileUtils.charToEscape, which Flink's PartitionPathUtils copies: control
# characters and these are written as %XX.
_ESCAPED = frozenset([chr(c) for c in range(1, 32)] + list("\"#%'*/:=?\\\x7f{[]^"))


def partition_keys(options: dict[str, str]) -> tuple[str, ...]:
    return tuple(k for k in (options.get(PARTITION_KEYS) or "").split(",") if k)


def split_schema(schema: tuple[Field, ...], keys: tuple[str, ...]) -> tuple[list[int], list[int]]:
    """(indices of the columns written into files, indices of the partition columns in
    `keys` order); unknown partition columns are an error."""
    names = [f.name for f in schema]
    missing = [k for k in keys if k not in names]
    if missing:
        raise ConnectorError(f"Partition column(s) {', '.join(missing)} are not columns of the table.")
    part = [names.index(k) for k in keys]
    data = [i for i in range(len(schema)) if i not in part]
    if not data:
        raise ConnectorError("A partitioned filesystem table needs at least one column that is not a partition column.")
    return data, part


def escape_path_name(value: str) -> str:
    if not any(c in _ESCAPED for c in value):
        return value
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape_path_name(value: str) -> str:
    if "%" not in value:
        return value
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "%" and _is_hex(value[i + 1 : i + 3]):
            out.append(chr(int(value[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(c in "0123456789abcdefABCDEF" for c in s)


def _escape_array(values: pa.Array) -> pa.Array:
    """escape_path_name over a string array: only the (usually zero) distinct values that
    contain an escaped character go through Python."""
    pattern = "[" + "".join("\\" + c if c in "\\^[]" else c for c in sorted(_ESCAPED) if c != "\x00") + "]"
    needs = pc.fill_null(pc.match_substring_regex(values, pattern), False)
    if not pc.any(needs).as_py():
        return values
    uniq = pc.unique(pc.filter(values, needs))
    mapping = pa.array([escape_path_name(v) for v in uniq.to_pylist()], pa.string())
    idx = pc.index_in(values, uniq)
    escaped = pc.take(mapping, pc.fill_null(idx, 0))
    return pc.if_else(needs, escaped, values)


def partition_dirs(
    batch: pa.RecordBatch, part_idx: list[int], schema: tuple[Field, ...], default_name: str, time_zone: str
) -> pa.Array:
    """The relative partition directory (`k1=v1/k2=v2`) of every row, as a string array."""
    parts = []
    for i in part_idx:
        text = render_array(batch.column(i), schema[i].type, time_zone)
        # Flink: NULL or whitespace-only → the default partition name.
        blank = pc.or_(pc.utf8_is_space(text), pc.equal(pc.utf8_length(text), 0))
        text = pc.if_else(pc.fill_null(blank, True), pa.scalar(default_name), text)
        parts.append(pc.binary_join_element_wise(escape_path_name(schema[i].name) + "=", _escape_array(text), ""))
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, "/")


def split_by_partition(data: pa.RecordBatch, dirs: pa.Array) -> list[tuple[str, pa.RecordBatch]]:
    """(partition directory, rows) per distinct partition of the batch, in first-seen
    order; rows keep their order within a partition."""
    uniq = pc.unique(dirs)
    if len(uniq) == 1:
        return [(str(uniq[0].as_py()), data)]
    codes = pc.index_in(dirs, uniq).to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniq) + 1))
    taken = data.take(pa.array(order))
    return [
        (str(uniq[j].as_py()), taken.slice(int(bounds[j]), int(bounds[j + 1] - bounds[j]))) for j in range(len(uniq))
    ]


# ---------------------------------------------------------------------- reading back
def partition_values(root: str, file_path: str) -> dict[str, str]:
    """`k=v` directory names between the table root and the file, unescaped."""
    rel = os.path.relpath(os.path.dirname(file_path), root)
    out: dict[str, str] = {}
    if rel in (".", ""):
        return out
    for part in rel.split(os.sep):
        key, eq, value = part.partition("=")
        if eq:
            out[unescape_path_name(key)] = unescape_path_name(value)
    return out


def constant_column(text: str | None, field: Field, n: int, default_name: str) -> pa.Array:
    """A partition value from a directory name, cast to the column's type, repeated `n` times."""
    arrow_type = field.type.to_arrow()
    if text is None or text == default_name:
        return pa.nulls(n, arrow_type)
    value: Any = text
    if field.type.name == "BOOLEAN":
        value = text.strip().lower()
    try:
        scalar = pa.array([value], pa.string()).cast(arrow_type)[0]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ConnectorError(
            f"Partition value '{text}' of column '{field.name}' cannot be read as {field.type}: {e}"
        ) from None
    return pa.repeat(scalar, n)


class PartitionedSplitReader(SplitReader):
    """Wraps a format reader over the file's columns and adds the partition columns (one
    constant per file) in the scan's projected order."""

    def __init__(
        self,
        inner: SplitReader,
        layout: list[tuple[str, int]],
        part_fields: dict[int, Field],
        values: dict[str, str],
        default_name: str,
        names: list[str],
    ) -> None:
        self._inner = inner
        self._layout = layout  # per output column: ("file", index into the reader's batch) | ("part", schema index)
        self._part_fields = part_fields
        self._values = values
        self._default = default_name
        self._names = names

    @property
    def skipped_rows(self) -> int:
        return int(getattr(self._inner, "skipped_rows", 0))

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        batch = self._inner.read(max_rows)
        if batch is None:
            return None
        cols = []
        for kind, i in self._layout:
            if kind == "file":
                cols.append(batch.column(i))
            else:
                f = self._part_fields[i]
                cols.append(constant_column(self._values.get(f.name), f, batch.num_rows, self._default))
        return pa.RecordBatch.from_arrays(cols, names=self._names)

    def offset(self) -> Any:
        return self._inner.offset()

    def seek(self, offset: Any) -> None:
        self._inner.seek(offset)

    def close(self) -> None:
        self._inner.close()
