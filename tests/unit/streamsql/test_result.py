"""TableResult folds a changelog into the final table; Row is PyFlink-shaped."""

import pyarrow as pa

from runtime.batch import with_system_columns
from runtime.types import INT, STRING, Field
from streamsql.result import TableResult
from streamsql.row import Row, RowKind


def _result() -> TableResult:
    fields = (Field("k", STRING()), Field("n", INT()))
    data = pa.RecordBatch.from_pydict(
        {"k": ["a", "a", "a", "b", "b"], "n": [1, 1, 2, 5, 5]},
        schema=pa.schema([("k", pa.string()), ("n", pa.int32())]),
    )
    batch = with_system_columns(data, kinds=[0, 1, 2, 0, 3])
    return TableResult(fields, lambda: iter([batch]), streaming=True)


def test_collect_carries_row_kinds() -> None:
    rows = list(_result().collect())
    assert [r.get_row_kind() for r in rows] == [
        RowKind.INSERT,
        RowKind.UPDATE_BEFORE,
        RowKind.UPDATE_AFTER,
        RowKind.INSERT,
        RowKind.DELETE,
    ]
    assert rows[2].k == "a" and rows[2]["n"] == 2 and rows[2][1] == 2


def test_to_arrow_applies_the_changelog() -> None:
    assert _result().to_arrow().to_pylist() == [{"k": "a", "n": 2}]


def test_row_kind_short_strings() -> None:
    assert [k.short_string() for k in RowKind] == ["+I", "-U", "+U", "-D"]
    assert Row(1, "x")[1] == "x"
