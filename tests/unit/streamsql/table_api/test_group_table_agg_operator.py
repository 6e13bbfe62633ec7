"""runtime.operators.group_table_agg directly: changelog per batch, snapshot/restore."""

from __future__ import annotations

import pyarrow as pa
from test_flat_aggregate import TOP2

from runtime.batch import DELETE, INSERT, data_columns, row_kinds
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.group_table_agg import (
    GroupTableAggregateOperator,
    GroupTableAggregateParams,
    TableAggregateFunction,
)
from runtime.types import BIGINT, INT, STRING, Field
from runtime.udf_registry import SPEC_ATTR, make_reference, register

SCHEMA = pa.schema([("k", pa.string()), ("x", pa.int64())])


def _op() -> GroupTableAggregateOperator:
    spec = getattr(TOP2, SPEC_ATTR)
    node = Node(
        1,
        "GroupTableAggregate",
        (0,),
        (Field("k", STRING()), Field("v", BIGINT()), Field("rnk", INT())),
        GroupTableAggregateParams(
            (0,), (1,), TableAggregateFunction(make_reference(spec, TOP2, register(spec)), "top2")
        ),
        changelog_mode="I,D",
    )
    return GroupTableAggregateOperator(node, OperatorContext(STREAMING, {}))


def _run(op: GroupTableAggregateOperator, rows: list[tuple]) -> list[tuple]:
    out = Output()
    batch = pa.RecordBatch.from_pylist([{"k": k, "x": x} for k, x in rows], schema=SCHEMA)
    op.process_batch(batch, 0, out)
    got = []
    for b in out.drain()[0]:
        for kind, rec in zip(row_kinds(b), data_columns(b).to_pylist(), strict=True):
            got.append((int(kind), *rec.values()))
    return got


def test_changes_per_batch_and_snapshot_restore() -> None:
    op = _op()
    assert _run(op, [("a", 1), ("a", 5), ("b", 2)]) == [(INSERT, "a", 5, 1), (INSERT, "a", 1, 2), (INSERT, "b", 2, 1)]
    snap = op.snapshot_state(1)
    restored = _op()
    restored.restore_state(snap)
    got = _run(restored, [("a", 7)])
    assert got == [(DELETE, "a", 5, 1), (DELETE, "a", 1, 2), (INSERT, "a", 7, 1), (INSERT, "a", 5, 2)]
    # the original operator is unaffected by the restored copy
    assert _run(op, [("b", 1)]) == [(DELETE, "b", 2, 1), (INSERT, "b", 2, 1), (INSERT, "b", 1, 2)]
