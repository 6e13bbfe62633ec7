"""The ProcessTableFunction operator (TO_CHANGELOG / FROM_CHANGELOG), batch by batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from runtime.batch import with_system_columns
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.process_table_function import (
    DEFAULT_MAPPING,
    FROM_CHANGELOG,
    PROCESS_TABLE_FUNCTION,
    TO_CHANGELOG,
    ProcessTableFunctionParams,
)
from runtime.types import INT, STRING, Field

_DEFAULT_ARGS = ("DEFAULT()", "DEFAULT()")


def _run(params: ProcessTableFunctionParams, fields: list[Field], batch: pa.RecordBatch) -> list[pa.RecordBatch]:
    node = Node(2, PROCESS_TABLE_FUNCTION.name, (1,), tuple(fields), params)
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    op.open()
    out = Output()
    op.process_batch(batch, 0, out)
    return out.batches


def _changelog() -> pa.RecordBatch:
    data = pa.RecordBatch.from_arrays(
        [pa.array([1, 2, 1, 1, 2], pa.int32()), pa.array(["a", "b", "a", "a2", "b"])], names=["id", "name"]
    )
    return with_system_columns(data, np.array([0, 0, 1, 2, 3], dtype=np.int8), np.array([10, 11, 12, 13, 14]))


def test_to_changelog_default_codes_every_row_kind_and_drops_op() -> None:
    params = ProcessTableFunctionParams(TO_CHANGELOG, 0, DEFAULT_MAPPING, _DEFAULT_ARGS)
    fields = [Field("op", STRING()), Field("id", INT()), Field("name", STRING())]
    (b,) = _run(params, fields, _changelog())
    assert b.schema.names == ["op", "id", "name", "__wm"]  # append-only: no __op
    assert b.column(0).to_pylist() == ["INSERT", "INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"]
    assert b.column(2).to_pylist() == ["a", "b", "a", "a2", "b"]
    assert b.column(3).to_pylist() == [10, 11, 12, 13, 14]


def test_to_changelog_mapping_forwards_only_mapped_kinds() -> None:
    mapping = (("INSERT", "false"), ("UPDATE_AFTER", "false"), ("DELETE", "true"))
    params = ProcessTableFunctionParams(TO_CHANGELOG, 0, mapping, _DEFAULT_ARGS)
    fields = [Field("deleted", STRING()), Field("id", INT()), Field("name", STRING())]
    (b,) = _run(params, fields, _changelog())
    assert b.to_pydict() == {
        "deleted": ["false", "false", "false", "true"],
        "id": [1, 2, 1, 2],
        "name": ["a", "b", "a2", "b"],
        "__wm": [10, 11, 13, 14],
    }


def test_to_changelog_insert_only_input_without_op_column() -> None:
    params = ProcessTableFunctionParams(TO_CHANGELOG, 0, DEFAULT_MAPPING, _DEFAULT_ARGS)
    data = pa.RecordBatch.from_arrays([pa.array([7], pa.int32())], names=["id"])
    (b,) = _run(params, [Field("op", STRING()), Field("id", INT())], data)
    assert b.to_pydict() == {"op": ["INSERT"], "id": [7]}


def test_from_changelog_maps_codes_drops_unmapped_and_null() -> None:
    mapping = (("INSERT", "c"), ("INSERT", "r"), ("UPDATE_BEFORE", "ub"), ("UPDATE_AFTER", "ua"), ("DELETE", "d"))
    params = ProcessTableFunctionParams(FROM_CHANGELOG, 1, mapping, _DEFAULT_ARGS)
    data = pa.RecordBatch.from_arrays(
        [
            pa.array([1, 2, 3, 1, 1, 2, 4], pa.int32()),
            pa.array(["c", "r", None, "ub", "ua", "d", "x"]),
            pa.array(["a", "b", "z", "a", "a2", "b", "y"]),
        ],
        names=["id", "op", "name"],
    )
    (b,) = _run(params, [Field("id", INT()), Field("name", STRING())], data)
    assert b.schema.names == ["id", "name", "__op"]
    assert b.column(0).to_pylist() == [1, 2, 1, 1, 2]
    assert b.column(1).to_pylist() == ["a", "b", "a", "a2", "b"]
    assert b.column(2).to_pylist() == [0, 0, 1, 2, 3]


def test_round_trip_restores_row_kinds() -> None:
    to = ProcessTableFunctionParams(TO_CHANGELOG, 0, DEFAULT_MAPPING, _DEFAULT_ARGS)
    (appended,) = _run(to, [Field("op", STRING()), Field("id", INT()), Field("name", STRING())], _changelog())
    back = ProcessTableFunctionParams(FROM_CHANGELOG, 0, DEFAULT_MAPPING, _DEFAULT_ARGS)
    (b,) = _run(back, [Field("id", INT()), Field("name", STRING())], appended)
    original = _changelog()
    assert b.column(0).to_pylist() == original.column(0).to_pylist()
    assert b.column(1).to_pylist() == original.column(1).to_pylist()
    assert b.column(2).to_pylist() == original.column(2).to_pylist()  # __op
    assert b.column(3).to_pylist() == original.column(3).to_pylist()  # __wm
