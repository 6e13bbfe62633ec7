"""SinkMaterializer driven batch by batch (no planner): Flink's SinkUpsertMaterializer rules
per sink key (a list of the input rows backing it), the same for any cut of the input into
batches, with and without an upsert key, and its state through snapshot / restore and a
re-split by key group."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds, with_system_columns
from runtime.checkpoint.rescale import rescale_operator_states
from runtime.graph import STREAMING, Node
from runtime.operators.base import Operator, OperatorContext, Output, create_operator
from runtime.operators.sink_materializer import SINK_MATERIALIZER, SinkMaterializerParams
from runtime.state.keygroups import key_group_range
from runtime.state.ttl import set_clock
from runtime.types import INT, STRING, Field

# (sink key k, input row id, value v): the sink's PRIMARY KEY is k, the input's upsert key id
SCHEMA = (Field("k", INT(False)), Field("id", INT()), Field("v", STRING()))


def make(upsert_key: tuple[int, ...] = (), config: dict[str, str] | None = None) -> Operator:
    node = Node(0, SINK_MATERIALIZER.name, (1,), SCHEMA, SinkMaterializerParams((0,), upsert_key))
    return create_operator(node, OperatorContext(mode=STREAMING, config=config or {}))


Row = tuple[str, int, int, Any]


def batch(rows: list[Row]) -> pa.RecordBatch:
    kinds = np.array([ROW_KIND_NAMES.index(r[0]) for r in rows], dtype=np.int8)
    data = pa.RecordBatch.from_arrays(
        [
            pa.array([r[1] for r in rows], pa.int32()),
            pa.array([r[2] for r in rows], pa.int32()),
            pa.array([r[3] for r in rows], pa.string()),
        ],
        names=["k", "id", "v"],
    )
    return with_system_columns(data, kinds)


def changes(out: Output) -> list[tuple[str, tuple[Any, ...]]]:
    res = []
    for b in out.drain()[0]:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        res += [(ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return res


def reference(rows: list[Row], by_id: bool) -> list[tuple[str, tuple]]:
    """Row-at-a-time model of Flink's SinkUpsertMaterializer (its list per key)."""
    lists: dict[int, list[tuple]] = {}
    out: list[tuple[str, tuple]] = []

    def same(a: tuple, b: tuple) -> bool:
        return a[1] == b[1] if by_id else a == b

    for kind, k, i, v in rows:
        row = (k, i, v)
        values = lists.setdefault(k, [])
        if kind in ("+I", "+U"):
            out.append(("+I" if not values else "+U", row))
            at = next((j for j, x in enumerate(values) if same(x, row)), -1)
            if at < 0:
                values.append(row)
            else:
                values[at] = row
        else:
            at = next((j for j, x in enumerate(values) if same(x, row)), -1)
            if at < 0:
                continue
            was_last = at == len(values) - 1
            values.pop(at)
            if not values:
                out.append(("-D", row))
            elif was_last:
                out.append(("+U", values[-1]))
    return out


def test_a_retraction_of_one_backing_row_keeps_the_other() -> None:
    """Two input rows back sink key 1; retracting the newer one shows the older one again
    (an upsert sink without the materializer would delete key 1)."""
    op, out = make((1,)), Output()
    op.process_batch(batch([("+I", 1, 10, "a"), ("+I", 1, 20, "b")]), 0, out)
    assert changes(out) == [("+I", (1, 10, "a")), ("+U", (1, 20, "b"))]
    op.process_batch(batch([("-D", 1, 20, "b")]), 0, out)
    assert changes(out) == [("+U", (1, 10, "a"))]
    op.process_batch(batch([("-U", 1, 10, "a"), ("+U", 1, 10, "a2")]), 0, out)
    assert changes(out) == [("-D", (1, 10, "a")), ("+I", (1, 10, "a2"))]
    # retracting a row that is not the last one changes nothing the sink shows
    op.process_batch(batch([("+I", 1, 30, "c"), ("-D", 1, 10, "a2"), ("-D", 9, 1, "x")]), 0, out)
    assert changes(out) == [("+U", (1, 30, "c"))]


@pytest.mark.parametrize("by_id", [True, False], ids=["upsert-key", "whole-row"])
def test_any_batching_gives_the_row_at_a_time_result(by_id: bool) -> None:
    rnd = random.Random(11)
    rows: list[Row] = []
    live: list[tuple[int, int, str]] = []
    for _ in range(500):
        if live and rnd.random() < 0.4:
            k, i, v = live.pop(rnd.randrange(len(live)))
            rows.append((rnd.choice(["-U", "-D"]), k, i, v))
        else:
            k, i, v = rnd.randrange(5), rnd.randrange(8), rnd.choice(["x", "y", None])
            rows.append((rnd.choice(["+I", "+U"]), k, i, v))
            live.append((k, i, v))
    want = reference(rows, by_id)
    for cut in (1, 4, 37, 500):
        op, got = make((1,) if by_id else ()), []
        for j in range(0, len(rows), cut):
            op.process_batch(batch(rows[j : j + cut]), 0, out := Output())
            got += changes(out)
        assert got == want, cut


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_snapshot_restore_keeps_each_keys_list(tmp_path: Path, backend: str) -> None:
    config = {"state.backend.type": backend, "state.backend.rocksdb.localdir": str(tmp_path)}
    op = make((1,), config)
    op.process_batch(batch([("+I", 1, 10, "a"), ("+I", 1, 20, "b"), ("+I", 2, 30, "c")]), 0, Output())
    restored = make((1,), config)
    restored.restore_state(op.snapshot_state(1))
    restored.process_batch(batch([("-D", 1, 20, "b"), ("-D", 2, 30, "c")]), 0, out := Output())
    assert changes(out) == [("+U", (1, 10, "a")), ("-D", (2, 30, "c"))]


def test_rescale_splits_the_lists_by_key_group() -> None:
    op = make((1,))
    rows: list[Row] = [("+I", k, i, f"v{k}.{i}") for k in range(30) for i in range(2)]
    op.process_batch(batch(rows), 0, Output())
    old = [((0, 127), op.snapshot_state(1))]
    shown: list[tuple[str, tuple]] = []
    for part_index in range(2):
        part = make((1,))
        part.restore_state(rescale_operator_states(part, old, key_group_range(part_index, 2, 128), part_index, 2))
        part.process_batch(batch([("-D", k, 1, f"v{k}.1") for k in range(30)]), 0, out := Output())
        got = changes(out)
        assert 0 < len(got) < 30  # only its own keys
        shown += got
    assert sorted(shown) == sorted(("+U", (k, 0, f"v{k}.0")) for k in range(30))


def test_state_ttl_forgets_a_key_not_written_for_the_ttl() -> None:
    """As Flink's state TTL on the materializer's list: after the TTL a key starts afresh
    (its +I is an INSERT again, a retraction of a forgotten row is ignored); a key written
    within the TTL keeps its list, also through a snapshot."""
    clock = [1_000_000]
    prev = set_clock(lambda: clock[0])
    try:
        op = make((1,), {"table.exec.state.ttl": "1 h"})
        op.process_batch(batch([("+I", 1, 10, "a"), ("+I", 2, 20, "b"), ("+I", 2, 21, "c")]), 0, Output())
        clock[0] += 3_000_000
        op.process_batch(batch([("+U", 2, 22, "d")]), 0, Output())  # key 2 written again
        clock[0] += 1_000_000  # key 1: 4_000_000 ms since its write; key 2: 1_000_000
        restored = make((1,), {"table.exec.state.ttl": "1 h"})
        restored.restore_state(op.snapshot_state(1))
        restored.process_batch(batch([("-D", 1, 10, "a"), ("-D", 2, 22, "d"), ("+I", 1, 11, "e")]), 0, out := Output())
        assert changes(out) == [("+U", (2, 21, "c")), ("+I", (1, 11, "e"))]
    finally:
        set_clock(prev)
