"""ChangelogNormalize driven batch by batch (no planner): Flink's "last row on changelog"
rules per key, independent of how the input is cut into batches, and its state through
snapshot / restore and a re-split by key group."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds, with_system_columns
from runtime.checkpoint.rescale import rescale_operator_states
from runtime.graph import STREAMING, Node
from runtime.operators.base import Operator, OperatorContext, Output, create_operator
from runtime.operators.changelog_normalize import CHANGELOG_NORMALIZE, ChangelogNormalizeParams
from runtime.state.keygroups import key_group_range
from runtime.types import INT, STRING, Field

SCHEMA = (Field("id", INT(False)), Field("v", STRING()))


def make(config: dict[str, str] | None = None) -> Operator:
    node = Node(0, CHANGELOG_NORMALIZE.name, (1,), SCHEMA, ChangelogNormalizeParams((0,)))
    return create_operator(node, OperatorContext(mode=STREAMING, config=config or {}))


def batch(rows: list[tuple[str, int, Any]]) -> pa.RecordBatch:
    """rows: (kind, id, v) with kind '+I' / '+U' / '-D' ('-D' rows carry only the key)."""
    kinds = np.array([ROW_KIND_NAMES.index(k) for k, _, _ in rows], dtype=np.int8)
    data = pa.RecordBatch.from_arrays(
        [pa.array([r[1] for r in rows], pa.int32()), pa.array([r[2] for r in rows], pa.string())], names=["id", "v"]
    )
    return with_system_columns(data, kinds)


def changes(out: Output) -> list[tuple[str, tuple[Any, ...]]]:
    res = []
    for b in out.drain()[0]:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        res += [(ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return res


def reference(rows: list[tuple[str, int, Any]], kept: dict[int, Any] | None = None) -> list[tuple[str, tuple]]:
    """Row-at-a-time model of Flink's rules (the operator must match it for any batching)."""
    kept = {} if kept is None else kept
    out: list[tuple[str, tuple]] = []
    for kind, k, v in rows:
        if kind in ("+I", "+U"):
            if k not in kept:
                out.append(("+I", (k, v)))
            elif kept[k] != v:
                out += [("-U", (k, kept[k])), ("+U", (k, v))]
            kept[k] = v
        elif k in kept:
            out.append(("-D", (k, kept.pop(k))))
    return out


def test_new_key_update_same_row_and_tombstones() -> None:
    op, out = make(), Output()
    op.process_batch(batch([("+I", 1, "a"), ("+I", 2, "b"), ("+U", 1, "a2"), ("-D", 3, None)]), 0, out)
    assert changes(out) == [("+I", (1, "a")), ("+I", (2, "b")), ("-U", (1, "a")), ("+U", (1, "a2"))]
    # equal row: nothing; tombstone of a known key: -D with the whole kept row; unknown: nothing
    op.process_batch(batch([("+U", 2, "b"), ("-D", 1, None), ("-D", 1, None), ("+I", 1, "c")]), 0, out)
    assert changes(out) == [("-D", (1, "a2")), ("+I", (1, "c"))]


def test_any_batching_gives_the_row_at_a_time_result() -> None:
    rnd = random.Random(7)
    rows = []
    for _ in range(400):
        kind = rnd.choice(["+I", "+U", "+U", "-D"])
        rows.append((kind, rnd.randrange(12), None if kind == "-D" else rnd.choice(["x", "y", None])))
    want = reference(rows)
    for cut in (1, 3, 17, 400):
        op, out, got = make(), Output(), []
        for i in range(0, len(rows), cut):
            op.process_batch(batch(rows[i : i + cut]), 0, out)
            got += changes(out)
        assert got == want, cut


def test_state_ttl_re_emits_equal_rows() -> None:
    op, out = make({"table.exec.state.ttl": "1 h"}), Output()
    op.process_batch(batch([("+I", 1, "a"), ("+U", 1, "a")]), 0, out)
    assert changes(out) == [("+I", (1, "a")), ("-U", (1, "a")), ("+U", (1, "a"))]


def test_snapshot_restore_keeps_the_last_rows() -> None:
    op, out = make(), Output()
    op.process_batch(batch([("+I", 1, "a"), ("+I", 2, "b"), ("-D", 2, None), ("+I", 3, "c")]), 0, out)
    snap = op.snapshot_state(1)
    restored = make()
    restored.restore_state(snap)
    restored.process_batch(batch([("+U", 1, "a2"), ("-D", 2, None), ("-D", 3, None)]), 0, out := Output())
    assert changes(out) == [("-U", (1, "a")), ("+U", (1, "a2")), ("-D", (3, "c"))]


def test_rescale_splits_kept_rows_by_key_group() -> None:
    op, out = make(), Output()
    op.process_batch(batch([("+I", k, f"v{k}") for k in range(40)] + [("-D", 5, None)]), 0, out)
    old = [((0, 127), op.snapshot_state(1))]
    deleted: list[tuple[str, tuple]] = []
    for i in range(2):
        part = make()
        part.restore_state(rescale_operator_states(part, old, key_group_range(i, 2, 128), i, 2))
        part.process_batch(batch([("-D", k, None) for k in range(40)]), 0, out := Output())
        got = changes(out)
        assert 0 < len(got) < 39  # only its own keys
        deleted += got
    assert sorted(deleted) == sorted(("-D", (k, f"v{k}")) for k in range(40) if k != 5)
