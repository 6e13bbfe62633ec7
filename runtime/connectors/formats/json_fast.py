"""The JSON reader's fast path: Arrow's C++ JSON parser over a whole batch of lines.

`json_format`'s exact path reproduces Flink's (Jackson's) conversion rules with DuckDB's
JSON functions and `convert.convert_strings`, but costs several DuckDB passes per batch.
Most data files hold values whose JSON type already matches the column (a number in a
BIGINT column, a string in a STRING column, an object in a ROW column), and for those
`pyarrow.json.read_json` with an explicit schema gives the same values in one C++ pass.

Arrow is stricter than Flink, never looser, for what it is asked here: a value whose JSON
type is not the column's (a string in an INT column, a number in a STRING column, a float
in an INT column, a number too large for BIGINT, duplicate keys...) raises instead of
converting. So the fast path either produces exactly the exact path's rows or returns
None, and the caller then runs the exact path on that batch (which also produces the
exact errors, 'ignore-parse-errors' skipping and 'fail-on-missing-field' checks).
Types whose text needs Java's rules (DATE, TIME, TIMESTAMP, DECIMAL, BINARY) are read by
Arrow as JSON strings and converted with the same `convert_strings` the exact path uses;
a batch where any of them does not convert goes to the exact path too.

Guards for what Arrow accepts but the exact path rejects (each exercised by the
differential test in tests/unit/runtime/connectors/test_json_fast.py): a line that does
not start with '{' (Arrow reads a top-level `null` as a row of NULLs), several objects on
one line (the row count no longer matches the line count), and SQL NULLs under
'fail-on-missing-field' (Arrow does not tell an absent field from an explicit null).
NaN/Infinity literals are accepted by both paths alike.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from runtime.connectors.formats.convert import convert_strings
from runtime.types import DataType, Field

_INT_RANGES = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
}
# Read by Arrow as JSON strings, then converted with Java's rules (convert.py).
_TEXT_CONVERTED = ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "DECIMAL", "BINARY", "VARBINARY")


def read_type(dtype: DataType) -> pa.DataType | None:
    """The Arrow type to ask `read_json` for, or None when the fast path cannot read `dtype`
    exactly like the exact path (MAP, MULTISET, intervals, ...)."""
    name = dtype.name
    if name in _INT_RANGES:
        return pa.int64()
    if name in ("FLOAT", "DOUBLE"):
        return pa.float64()
    if name == "BOOLEAN":
        return pa.bool_()
    if dtype.is_string or name in _TEXT_CONVERTED:
        return pa.string()
    if name == "ROW":
        if not dtype.children or len(set(dtype.field_names)) != len(dtype.field_names):
            return None
        kids = [read_type(c) for c in dtype.children]
        if any(k is None for k in kids):
            return None
        return pa.struct([pa.field(fn, k) for fn, k in zip(dtype.field_names, kids, strict=True)])
    if name == "ARRAY":
        elem = read_type(dtype.children[0])
        return None if elem is None else pa.list_(elem)
    return None


class FastJsonReader:
    """Lines of one batch → one typed array per field, or None (use the exact path)."""

    def __init__(self, fields: list[Field], style: str, fail_on_missing: bool) -> None:
        self.fields = fields
        self.style = style
        self.fail_on_missing = fail_on_missing
        types = [read_type(f.type) for f in fields]
        self.schema: pa.Schema | None = None
        if fields and all(t is not None for t in types) and len({f.name for f in fields}) == len(fields):
            self.schema = pa.schema([pa.field(f.name, t) for f, t in zip(fields, types, strict=True)])

    @property
    def usable(self) -> bool:
        return self.schema is not None

    def read(self, lines: pa.Array) -> list[pa.Array] | None:
        """Convert `lines` (no blank lines, no line terminators) or return None."""
        if self.schema is None or len(lines) == 0:
            return None
        data = _joined(lines)
        if data is None:
            return None
        try:
            table = pajson.read_json(
                pa.py_buffer(data),
                read_options=pajson.ReadOptions(use_threads=False, block_size=max(1 << 20, len(data) + 1)),
                parse_options=pajson.ParseOptions(
                    explicit_schema=self.schema, unexpected_field_behavior="ignore", newlines_in_values=False
                ),
            )
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        if table.num_rows != len(lines):  # several objects on one line: the exact path rejects it
            return None
        out: list[pa.Array] = []
        for i, f in enumerate(self.fields):
            col = table.column(i).combine_chunks()
            if self.fail_on_missing and col.null_count:
                return None  # absent or explicit null? only the exact path can tell
            vals = self._finish(col, f.type)
            if vals is None:
                return None
            out.append(vals)
        return out

    def _finish(self, arr: pa.Array, dtype: DataType) -> pa.Array | None:
        """Arrow's values → the column's Arrow type, or None if some value needs the exact path."""
        name = dtype.name
        target = dtype.to_arrow()
        if name in _INT_RANGES:
            lo, hi = _INT_RANGES[name]
            if name != "BIGINT" and len(arr) > arr.null_count:
                mm = pc.min_max(arr)
                if mm["min"].as_py() < lo or mm["max"].as_py() > hi:
                    return None  # out of range: the exact path reports the row
            return arr.cast(target)
        if name in ("FLOAT", "DOUBLE"):
            return arr if name == "DOUBLE" else pc.cast(arr, target)
        if name == "BOOLEAN" or dtype.is_string:
            return arr
        if name in _TEXT_CONVERTED:
            values, bad = convert_strings(arr, dtype, self.style)
            return None if bad.any() else values
        if name == "ROW":
            assert isinstance(arr, pa.StructArray)
            kids = []
            for i, ct in enumerate(dtype.children):
                kid = self._finish(arr.field(i), ct)
                if kid is None:
                    return None
                kids.append(kid)
            fields = [
                pa.field(fn, ct.to_arrow(), ct.nullable)
                for fn, ct in zip(dtype.field_names, dtype.children, strict=True)
            ]
            mask = arr.is_null() if arr.null_count else None
            return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)
        if name == "ARRAY":
            assert isinstance(arr, pa.ListArray)
            flat = arr.values.slice(arr.offsets[0].as_py(), arr.offsets[-1].as_py() - arr.offsets[0].as_py())
            elems = self._finish(flat, dtype.children[0])
            if elems is None:
                return None
            offsets = pc.subtract(arr.offsets, arr.offsets[0])
            mask = arr.is_null() if arr.null_count else None
            return pa.ListArray.from_arrays(offsets, elems, type=target, mask=mask)
        return None


def _joined(lines: pa.Array) -> bytes | None:
    """The lines as one newline-separated byte string (one copy, no Python per-line work),
    or None unless every line starts with '{': Arrow 26 reads a top-level `null` line as a
    row of NULLs (and crashes when it is the first), the exact path rejects it."""
    nl = pc.binary_join_element_wise(lines, pa.scalar("\n"), pa.scalar(""))
    offsets = np.frombuffer(nl.buffers()[1], dtype=np.int32, count=len(nl) + 1, offset=nl.offset * 4)
    raw = np.frombuffer(nl.buffers()[2], dtype=np.uint8)
    if not (raw[offsets[:-1]] == ord("{")).all():
        return None
    return raw[int(offsets[0]) : int(offsets[-1])].tobytes()
