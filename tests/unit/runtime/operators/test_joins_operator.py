"""The regular Join operator driven by hand: exact changelogs for inner / outer / semi /
anti joins with retractions, NULL keys, duplicates, residual predicates, batch mode and
snapshot/restore."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds, with_system_columns
from runtime.errors import JobError
from runtime.expr.ir import Call, InputRef
from runtime.graph import BATCH, STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.join import JOIN, JoinParams
from runtime.types import BOOLEAN, INT, STRING, Field

OPS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
LEFT = [Field("k", INT()), Field("a", STRING())]
RIGHT = [Field("k", INT()), Field("b", STRING())]


def _join(join_type: str, mode: str = STREAMING, condition: Any = None, keys: bool = True, **extra: Any):
    semi = join_type in ("SEMI", "ANTI")
    schema = tuple(LEFT) if semi else tuple(LEFT + [Field("k0", RIGHT[0].type), RIGHT[1]])
    params = {
        "join_type": join_type,
        "left_keys": [0] if keys else [],
        "right_keys": [0] if keys else [],
        "key_types": [INT()] if keys else [],
        "null_safe": [False] if keys else [],
        "condition": condition,
        "left_width": 2,
        "right_types": [f.type for f in RIGHT],
        **extra,
    }
    typed = JoinParams(**{k: tuple(v) if isinstance(v, list) else v for k, v in params.items()})
    node = Node(id=2, operator=JOIN.name, inputs=(0, 1), schema=schema, params=typed, changelog_mode="I,UB,UA,D")
    return create_operator(node, OperatorContext(mode=mode, config={}))


def _batch(rows: list[tuple[str, int | None, str | None]]) -> pa.RecordBatch:
    data = pa.RecordBatch.from_arrays(
        [pa.array([r[1] for r in rows], pa.int32()), pa.array([r[2] for r in rows], pa.string())], names=["k", "x"]
    )
    return with_system_columns(data, np.array([OPS[r[0]] for r in rows], dtype=np.int8))


def _feed(op, side: int, rows: list) -> list[tuple[str, tuple]]:  # noqa: ANN001
    out = Output()
    op.process_batch(_batch(rows), side, out)
    return _rows(out)


def _rows(out: Output) -> list[tuple[str, tuple]]:
    res = []
    for b in out.batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        for i in range(b.num_rows):
            res.append((ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)))
    return res


def test_inner_join_duplicates_null_keys_and_retraction() -> None:
    op = _join("INNER")
    assert _feed(op, 0, [("+I", 1, "x"), ("+I", None, "n"), ("+I", 2, "y")]) == []
    # two right rows for key 1 (one a duplicate of the other), a NULL key never matches
    got = _feed(op, 1, [("+I", 1, "p"), ("+I", 1, "p"), ("+I", None, "q")])
    assert got == [("+I", (1, "x", 1, "p")), ("+I", (1, "x", 1, "p"))]
    got = _feed(op, 0, [("-D", 1, "x"), ("+I", 1, "z")])
    assert got == [
        ("-D", (1, "x", 1, "p")),
        ("-D", (1, "x", 1, "p")),
        ("+I", (1, "z", 1, "p")),
        ("+I", (1, "z", 1, "p")),
    ]


def test_left_outer_pads_then_retracts_padding() -> None:
    op = _join("LEFT")
    assert _feed(op, 0, [("+I", 1, "x"), ("+I", None, "n")]) == [
        ("+I", (1, "x", None, None)),
        ("+I", (None, "n", None, None)),
    ]
    got = _feed(op, 1, [("+I", 1, "p"), ("+I", 1, "q")])
    assert got == [("-D", (1, "x", None, None)), ("+I", (1, "x", 1, "p")), ("+I", (1, "x", 1, "q"))]
    got = _feed(op, 1, [("-D", 1, "p"), ("-D", 1, "q")])
    assert got == [("-D", (1, "x", 1, "p")), ("-D", (1, "x", 1, "q")), ("+I", (1, "x", None, None))]
    # the left row goes away: its padded row is retracted
    assert _feed(op, 0, [("-U", 1, "x")]) == [("-D", (1, "x", None, None))]


def test_full_outer_in_one_batch_transitions_are_ordered() -> None:
    op = _join("FULL")
    assert _feed(op, 1, [("+I", 5, "r")]) == [("+I", (None, None, 5, "r"))]
    # insert then retract a matching left row in the same batch: padding goes and comes back
    got = _feed(op, 0, [("+I", 5, "a"), ("-D", 5, "a")])
    assert got == [
        ("-D", (None, None, 5, "r")),
        ("+I", (5, "a", 5, "r")),
        ("-D", (5, "a", 5, "r")),
        ("+I", (None, None, 5, "r")),
    ]


def test_residual_condition_decides_matches_of_outer_join() -> None:
    # b <> 'no' on the right side (index 3 of the joined row)
    cond = Call("not_equals", (InputRef(3, STRING()), InputRef(1, STRING())), BOOLEAN())
    op = _join("LEFT", condition=cond)
    _feed(op, 0, [("+I", 1, "same")])
    assert _feed(op, 1, [("+I", 1, "same")]) == []
    assert _feed(op, 1, [("+I", 1, "other")]) == [("-D", (1, "same", None, None)), ("+I", (1, "same", 1, "other"))]


def test_join_without_keys_is_a_filtered_cross_product() -> None:
    cond = Call("less_than", (InputRef(0, INT()), InputRef(2, INT())), BOOLEAN())
    op = _join("INNER", condition=cond, keys=False)
    _feed(op, 0, [("+I", 1, "a"), ("+I", 3, "b")])
    assert _feed(op, 1, [("+I", 2, "r")]) == [("+I", (1, "a", 2, "r"))]


def test_semi_and_anti_joins_flip_on_right_changes() -> None:
    semi, anti = _join("SEMI"), _join("ANTI")
    assert _feed(semi, 0, [("+I", 1, "x"), ("+I", 1, "x")]) == []
    assert _feed(anti, 0, [("+I", 1, "x"), ("+I", None, "n")]) == [("+I", (1, "x")), ("+I", (None, "n"))]
    assert _feed(semi, 1, [("+I", 1, "p"), ("+I", 1, "q")]) == [("+I", (1, "x")), ("+I", (1, "x"))]
    assert _feed(anti, 1, [("+I", 1, "p")]) == [("-D", (1, "x"))]
    assert _feed(semi, 1, [("-D", 1, "p")]) == []
    assert _feed(semi, 1, [("-D", 1, "q")]) == [("-D", (1, "x")), ("-D", (1, "x"))]
    assert _feed(anti, 1, [("-D", 1, "p")]) == [("+I", (1, "x"))]
    # left input keeps its own row kind
    assert _feed(anti, 0, [("-U", 1, "x")]) == [("-U", (1, "x"))]


# Left (1, x), (2, y), (NULL, n) joined with right (1, p), (3, q) on the first column: the
# final rows of each join type.
BATCH_JOIN_RESULTS = [
    ("INNER", [(1, "x", 1, "p")]),
    ("LEFT", [(1, "x", 1, "p"), (2, "y", None, None), (None, "n", None, None)]),
    ("RIGHT", [(1, "x", 1, "p"), (None, None, 3, "q")]),
    ("FULL", [(1, "x", 1, "p"), (2, "y", None, None), (None, "n", None, None), (None, None, 3, "q")]),
    ("SEMI", [(1, "x")]),
    ("ANTI", [(2, "y"), (None, "n")]),
]


@pytest.mark.parametrize(("join_type", "expected"), BATCH_JOIN_RESULTS)
def test_batch_mode_final_rows(join_type: str, expected: list[tuple]) -> None:
    op = _join(join_type, mode=BATCH)
    out = Output()
    op.process_batch(_batch([("+I", 1, "x"), ("+I", 2, "y"), ("+I", None, "n")]), 0, out)
    op.process_batch(_batch([("+I", 1, "p"), ("+I", 3, "q")]), 1, out)
    op.end_input(0, out)
    assert out.batches == []
    op.end_input(1, out)
    rows = _rows(out)
    assert all(k == "+I" for k, _ in rows)
    assert sorted((r for _, r in rows), key=repr) == sorted(expected, key=repr)


@pytest.mark.parametrize(("join_type", "expected"), BATCH_JOIN_RESULTS)
def test_batch_mode_streams_the_left_side_once_the_right_ended(join_type: str, expected: list[tuple]) -> None:
    """BATCH: the right input ended first, so each left batch is probed and emitted as it
    arrives (nothing of it buffered); only unmatched right rows wait for the end."""
    op = _join(join_type, mode=BATCH)
    out = Output()
    op.process_batch(_batch([("+I", 1, "x")]), 0, out)  # before the right side ended: buffered
    op.process_batch(_batch([("+I", 1, "p"), ("+I", 3, "q")]), 1, out)
    assert out.batches == []
    op.end_input(1, out)
    early = _rows(out)
    assert [r for _, r in early] == [r for r in expected if r[:2] == (1, "x")]
    late = _feed(op, 0, [("+I", 2, "y"), ("+I", None, "n")])
    assert not op._buffers[0]  # streamed, not kept
    assert [r for _, r in late] == [r for r in expected if r[:2] in ((2, "y"), (None, "n"))]
    end = Output()
    op.end_input(0, end)
    rest = _rows(end)
    assert [r for _, r in rest] == [r for r in expected if r[0] is None and r[1] is None]
    assert all(k == "+I" for k, _ in early + late + rest)


def test_single_row_right_fails_like_flink() -> None:
    op = _join("LEFT", keys=False, single_row_right=True)
    _feed(op, 1, [("+I", 1, "a")])
    with pytest.raises(JobError, match="more than one row"):
        _feed(op, 1, [("+I", 2, "b")])


def test_snapshot_restore_keeps_state() -> None:
    op = _join("LEFT")
    _feed(op, 0, [("+I", 1, "x")])
    snap = op.snapshot_state(1)
    fresh = _join("LEFT")
    fresh.restore_state(snap)
    assert _feed(fresh, 1, [("+I", 1, "p")]) == [("-D", (1, "x", None, None)), ("+I", (1, "x", 1, "p"))]
