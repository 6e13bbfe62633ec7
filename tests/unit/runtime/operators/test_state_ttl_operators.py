"""State TTL in the stateful operators, driven directly with a fake clock.

Flink's semantics (runtime/state/ttl.py): state of a key not written for the TTL is gone,
silently; a key that comes back starts from scratch. Keys written recently are unaffected.
Every operator's TTL timestamps survive snapshot_state / restore_state.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from runtime.batch import ROW_KIND_NAMES, data_width, row_kinds
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output, create_operator
from runtime.operators.spec import encode_value, spec_for
from runtime.state.ttl import set_clock
from runtime.types import BIGINT, INT, STRING, Field

HOUR = 3_600_000


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Iterator[Clock]:
    c = Clock()
    prev = set_clock(c)
    yield c
    set_clock(prev)


def _op(operator: str, schema: list[Field], params: dict[str, Any], config: dict[str, str] | None = None) -> Any:
    spec = spec_for(operator)  # the test's JSON-shaped params as the kind's typed params
    typed = spec.decode_params(encode_value(params)) if spec is not None else params
    node = Node(1, operator, (0,), tuple(schema), typed, "I,UB,UA,D")
    op = create_operator(node, OperatorContext(mode=STREAMING, config=config or {}))
    op.input_changelog_modes = ["I", "I"]
    op.open()
    return op


def _batch(cols: dict[str, list[Any]], kinds: list[int] | None = None) -> pa.RecordBatch:
    arrays = [pa.array(v) for v in cols.values()]
    n = len(arrays[0])
    arrays.append(pa.array(kinds or [0] * n, pa.int8()))
    return pa.RecordBatch.from_arrays(arrays, names=[*cols, "__op"])


def _feed(op: Any, batch: pa.RecordBatch, side: int = 0) -> list[tuple[str, tuple[Any, ...]]]:
    out = Output()
    op.process_batch(batch, side, out)
    rows = []
    for b in out.batches:
        kinds = row_kinds(b)
        cols = [b.column(i).to_pylist() for i in range(data_width(b))]
        rows += [(ROW_KIND_NAMES[kinds[i]], tuple(c[i] for c in cols)) for i in range(b.num_rows)]
    return rows


def _restored(op: Any, make: Any) -> Any:
    fresh = make()
    fresh.restore_state(op.snapshot_state(1))
    return fresh


# ---------------------------------------------------------------------- GroupAggregate
def _count_agg(config: dict[str, str] | None = None, params: dict[str, Any] | None = None) -> Any:
    aggs = [{"name": "count", "args": [], "distinct": False, "filter": None, "type": BIGINT(False), "params": {}}]
    return _op(
        "GroupAggregate",
        [Field("k", STRING()), Field("c", BIGINT(False))],
        {"grouping": [0], "aggs": aggs, **(params or {})},
        config,
    )


def test_group_agg_key_expires_and_restarts(clock: Clock) -> None:
    op = _count_agg({"table.exec.state.ttl": "1 h"})
    assert _feed(op, _batch({"k": ["a", "b"]})) == [("+I", ("a", 1)), ("+I", ("b", 1))]
    clock.now += HOUR - 1
    assert _feed(op, _batch({"k": ["b"]})) == [("-U", ("b", 1)), ("+U", ("b", 2))]
    clock.now += 1  # a: exactly 1 h since its last write; b written 1 ms ago
    assert _feed(op, _batch({"k": ["a", "b"]})) == [("+I", ("a", 1)), ("-U", ("b", 2)), ("+U", ("b", 3))]
    assert op.ctx.metrics.extra["state_ttl_expired_keys"] == 1
    clock.now += 2 * HOUR  # both gone; nothing is emitted for expiry itself
    assert _feed(op, _batch({"k": ["c"]})) == [("+I", ("c", 1))]
    assert op.state_size()["keys"] == 1
    assert op.state_size()["bytes"] > 0


def test_group_agg_without_ttl_never_expires(clock: Clock) -> None:
    op = _count_agg()
    _feed(op, _batch({"k": ["a"]}))
    clock.now += 10_000 * HOUR
    assert _feed(op, _batch({"k": ["a"]})) == [("-U", ("a", 1)), ("+U", ("a", 2))]


def test_group_agg_hint_param_overrides_config(clock: Clock) -> None:
    op = _count_agg({"table.exec.state.ttl": "1 h"}, {"state_ttl_ms": 1000})
    _feed(op, _batch({"k": ["a"]}))
    clock.now += 1000
    assert _feed(op, _batch({"k": ["a"]})) == [("+I", ("a", 1))]


def test_group_agg_ttl_survives_snapshot_restore(clock: Clock) -> None:
    config = {"table.exec.state.ttl": "1 h"}
    op = _count_agg(config)
    _feed(op, _batch({"k": ["a"]}))
    clock.now += HOUR // 2
    _feed(op, _batch({"k": ["b"]}))
    op = _restored(op, lambda: _count_agg(config))
    clock.now += HOUR // 2  # a expired (written 1 h ago), b not
    assert _feed(op, _batch({"k": ["a", "b"]})) == [("+I", ("a", 1)), ("-U", ("b", 1)), ("+U", ("b", 2))]


# ---------------------------------------------------------------------- Join
def _join(join_type: str, ttl: Any = None, config: dict[str, str] | None = None) -> Any:
    params: dict[str, Any] = {
        "join_type": join_type,
        "left_keys": [0],
        "right_keys": [0],
        "key_types": [INT()],
        "null_safe": [False],
        "condition": None,
        "left_width": 2,
        "right_types": [INT(), STRING()],
    }
    if ttl is not None:
        params["state_ttl_ms"] = list(ttl) if isinstance(ttl, (list, tuple)) else ttl
    schema = [Field("k", INT()), Field("l", STRING()), Field("k0", INT()), Field("r", STRING())]
    return _op("Join", schema, params, config)


def test_join_rows_expire_per_side(clock: Clock) -> None:
    op = _join("INNER", [HOUR, 2 * HOUR])
    _feed(op, _batch({"k": [1, 2], "l": ["l1", "l2"]}), 0)
    _feed(op, _batch({"k": [1, 2], "r": ["r1", "r2"]}), 1)
    clock.now += HOUR
    # left rows expired (1 h), right rows live (2 h): a new left row still finds r1
    assert _feed(op, _batch({"k": [1], "l": ["l1b"]}), 0) == [("+I", (1, "l1b", 1, "r1"))]
    # a new right row no longer finds the old left rows, only l1b
    assert _feed(op, _batch({"k": [1, 2], "r": ["x", "y"]}), 1) == [("+I", (1, "l1b", 1, "x"))]
    assert op.ctx.metrics.extra["state_ttl_expired_rows"] == 2
    clock.now += 2 * HOUR  # everything expired; key slots freed too
    assert _feed(op, _batch({"k": [2], "l": ["z"]}), 0) == []
    size = op.state_size()
    assert size["rows"] == 1 and size["keys"] == 1 and size["bytes"] > 0


def test_left_join_matches_refresh_the_outer_row(clock: Clock) -> None:
    op = _join("LEFT", config={"table.exec.state.ttl": "1 h"})
    assert _feed(op, _batch({"k": [1], "l": ["a"]}), 0) == [("+I", (1, "a", None, None))]
    clock.now += HOUR - 10
    # the match updates the left row's association count: a write (Flink's outer join)
    assert _feed(op, _batch({"k": [1], "r": ["x"]}), 1) == [("-D", (1, "a", None, None)), ("+I", (1, "a", 1, "x"))]
    clock.now += 20  # 1 h since the left row was inserted, 10 ms since the match
    assert _feed(op, _batch({"k": [1], "r": ["y"]}), 1) == [("+I", (1, "a", 1, "y"))]


def test_join_ttl_survives_snapshot_restore(clock: Clock) -> None:
    op = _join("INNER", [HOUR, HOUR])
    _feed(op, _batch({"k": [1], "l": ["old"]}), 0)
    clock.now += HOUR // 2
    _feed(op, _batch({"k": [1], "l": ["new"]}), 0)
    op = _restored(op, lambda: _join("INNER", [HOUR, HOUR]))
    clock.now += HOUR // 2
    assert _feed(op, _batch({"k": [1], "r": ["r"]}), 1) == [("+I", (1, "new", 1, "r"))]


# ---------------------------------------------------------------------- Deduplicate
def _dedup(keep_last: bool) -> Any:
    params = {
        "partition_keys": [0],
        "order": [{"index": 1, "descending": keep_last, "nulls_first": False}],
        "rank_type": "ROW_NUMBER",
        "rank_start": 1,
        "rank_end": 1,
        "output_rank": False,
        "keep_last": keep_last,
        "time_kind": "PROCTIME",
    }
    return _op("Deduplicate", [Field("k", STRING()), Field("v", INT())], params, {"table.exec.state.ttl": "1 h"})


def test_dedup_keep_first_emits_again_after_expiry(clock: Clock) -> None:
    op = _dedup(False)
    assert _feed(op, _batch({"k": ["a"], "v": [1]})) == [("+I", ("a", 1))]
    clock.now += HOUR - 1
    assert _feed(op, _batch({"k": ["a"], "v": [2]})) == []  # not a write: the TTL runs on
    clock.now += 1
    assert _feed(op, _batch({"k": ["a"], "v": [3]})) == [("+I", ("a", 3))]


def test_dedup_keep_last_restarts_with_insert(clock: Clock) -> None:
    op = _dedup(True)
    _feed(op, _batch({"k": ["a", "b"], "v": [1, 1]}))
    clock.now += HOUR // 2
    assert _feed(op, _batch({"k": ["b"], "v": [2]})) == [("-U", ("b", 1)), ("+U", ("b", 2))]
    op = _restored(op, lambda: _dedup(True))
    clock.now += HOUR // 2
    assert _feed(op, _batch({"k": ["a", "b"], "v": [5, 6]})) == [
        ("+I", ("a", 5)),
        ("-U", ("b", 2)),
        ("+U", ("b", 6)),
    ]
    assert op.state_size()["keys"] == 2


# ---------------------------------------------------------------------- Rank
def _rank() -> Any:
    params = {
        "partition_keys": [0],
        "order": [{"index": 1, "descending": True, "nulls_first": False}],
        "rank_type": "ROW_NUMBER",
        "rank_start": 1,
        "rank_end": 1,
        "output_rank": False,
    }
    return _op("Rank", [Field("k", STRING()), Field("v", INT())], params, {"table.exec.state.ttl": "1 h"})


def test_rank_partition_expires_and_ranks_from_scratch(clock: Clock) -> None:
    op = _rank()
    assert _feed(op, _batch({"k": ["a", "b"], "v": [10, 10]})) == [("+I", ("a", 10)), ("+I", ("b", 10))]
    clock.now += HOUR // 2
    assert _feed(op, _batch({"k": ["b"], "v": [5]})) == []  # written: b's TTL restarts
    op = _restored(op, lambda: _rank())
    clock.now += HOUR // 2
    # a expired: its old top row is forgotten, 3 is its new top; b still has 10 on top
    assert _feed(op, _batch({"k": ["a", "b"], "v": [3, 7]})) == [("+I", ("a", 3))]
    assert op.state_size()["keys"] == 2
    assert op.ctx.metrics.extra["state_ttl_expired_keys"] == 1


def test_expiry_check_is_one_scan_per_due_batch(clock: Clock) -> None:
    op = _count_agg({"table.exec.state.ttl": "1 h"})
    _feed(op, _batch({"k": [f"k{i}" for i in range(1000)]}))
    ttl = op.ttl
    assert ttl.next_due == clock.now + HOUR
    clock.now += 10
    _feed(op, _batch({"k": ["k1"]}))
    assert ttl.expired_total == 0 and ttl.next_due == clock.now - 10 + HOUR
    clock.now += HOUR
    _feed(op, _batch({"k": ["new"]}))
    assert ttl.expired_total == 1000
    assert np.count_nonzero(ttl.last != np.iinfo(np.int64).max) == 1


def test_group_agg_update_of_an_expired_key_becomes_an_insert(clock: Clock) -> None:
    """Flink ignores a retraction for a key without state: after expiry, an updating
    input's `-U old, +U new` gives `+I` of the new value alone."""
    aggs = [{"name": "sum", "args": [1], "distinct": False, "filter": None, "type": BIGINT(), "params": {}}]
    schema = [Field("k", STRING()), Field("s", BIGINT())]
    op = _op("GroupAggregate", schema, {"grouping": [0], "aggs": aggs}, {"table.exec.state.ttl": "1 h"})
    op.input_changelog_modes = ["I,UB,UA,D"]
    assert _feed(op, _batch({"k": ["a"], "v": [5]})) == [("+I", ("a", 5))]
    clock.now += HOUR
    assert _feed(op, _batch({"k": ["a", "a"], "v": [5, 7]}, [1, 2])) == [("+I", ("a", 7))]
    clock.now += HOUR
    assert _feed(op, _batch({"k": ["a"], "v": [7]}, [3])) == []  # a lone retraction: ignored
    assert op.state_size()["keys"] == 0
    assert _feed(op, _batch({"k": ["b", "b"], "v": [1, 1]}, [0, 3])) == []  # +I then -D in one batch
