"""IntervalJoin / WindowJoin / TemporalJoin operators driven directly with batches and
watermarks: when rows join, expire, are padded or dropped as late."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pytest

from runtime.batch import MAX_WATERMARK
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.interval_join import INTERVAL_JOIN, IntervalJoinOperator, IntervalJoinParams
from runtime.operators.temporal_join import TEMPORAL_JOIN, TemporalJoinOperator, TemporalJoinParams
from runtime.operators.window_join import WINDOW_JOIN, WindowJoinOperator, WindowJoinParams
from runtime.plan_params import WindowParams
from runtime.state.ttl import set_clock
from runtime.types import INT, TIMESTAMP, Field

TS = TIMESTAMP(3)
SCHEMA = (Field("k", INT()), Field("ts", TS), Field("k0", INT()), Field("ts0", TS))


def _batch(keys: list[int | None], ts: list[int]) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array(keys, pa.int32()), pa.array(ts, pa.timestamp("ms"))], names=["k", "ts"])


def _rows(out: Output) -> list[tuple]:
    rows = []
    for b in out.batches:
        for r in b.to_pylist():
            rows.append(
                tuple(
                    None if v is None else (v.timestamp() * 1000 if hasattr(v, "timestamp") else v)
                    for v in list(r.values())[:4]
                )
            )
    out.batches.clear()
    return rows


def _interval(kind: str) -> IntervalJoinOperator:
    node = Node(1, INTERVAL_JOIN.name, (0, 0), SCHEMA, IntervalJoinParams(
        kind=kind, left_keys=(0,), right_keys=(0,), left_time=1, right_time=1,
        lower_ms=0, upper_ms=1000, condition=None, left_width=2,
    ))  # fmt: skip
    return IntervalJoinOperator(node, OperatorContext(mode=STREAMING, config={}))


def test_interval_join_joins_expires_and_pads() -> None:
    op, out = _interval("FULL"), Output()
    op.process_batch(_batch([1, 2], [1000, 1000]), 0, out)
    op.process_batch(_batch([1, 1], [2000, 2001]), 1, out)
    assert [r[0] for r in _rows(out)] == [1], "r.ts - l.ts within [0, 1000] only"
    op.on_watermark(1500, out)  # nothing expires yet: left t + 1000 >= 1500, right s >= 1500
    assert _rows(out) == []
    op.process_batch(_batch([1], [1500]), 0, out)  # still cached right rows: joins both
    assert sorted(r[3] for r in _rows(out)) == [2000.0, 2001.0]
    op.on_watermark(2500, out)  # left rows expire (t + 1000 < 2500): key 2 never matched
    assert _rows(out) == [(2, 1000.0, None, None)]
    assert out.watermarks[-1] == 1500, "output watermark held back by the interval"
    op.process_batch(_batch([3], [100]), 0, out)  # too old to wait: padded at once
    assert _rows(out) == [(3, 100.0, None, None)]
    op.on_watermark(MAX_WATERMARK, out)
    assert _rows(out) == []  # both right rows were matched: no padding


def test_window_join_drops_late_rows_and_fires_once() -> None:
    schema = tuple(Field(n, TS if n.startswith("w") else INT()) for n in ("k", "ws", "we", "k0", "ws0", "we0"))
    node = Node(1, WINDOW_JOIN.name, (0, 0), schema, WindowJoinParams(
        kind="LEFT", left_keys=(0,), right_keys=(0,), left_window=(1, 2), right_window=(1, 2),
        window=WindowParams("TUMBLE", size_ms=10), ltz=False, condition=None, left_width=3,
    ))  # fmt: skip
    op, out = WindowJoinOperator(node, OperatorContext(mode=STREAMING, config={})), Output()

    def rows(k: list[int], start: int) -> pa.RecordBatch:
        n = len(k)
        return pa.RecordBatch.from_arrays(
            [
                pa.array(k, pa.int32()),
                pa.array([start] * n, pa.timestamp("ms")),
                pa.array([start + 10] * n, pa.timestamp("ms")),
            ],
            names=["k", "ws", "we"],
        )

    op.process_batch(rows([1, 2], 0), 0, out)
    op.process_batch(rows([1], 0), 1, out)
    op.on_watermark(9, out)
    got = sorted((b["k"], b["k0"]) for batch in out.batches for b in batch.to_pylist())
    assert got == [(1, 1), (2, None)]
    out.batches.clear()
    op.process_batch(rows([1], 0), 1, out)  # the window fired already: late
    assert op.ctx.metrics.late_rows_dropped == 1
    op.on_watermark(MAX_WATERMARK, out)
    assert out.batches == []


def test_temporal_join_picks_version_at_probe_time() -> None:
    schema = (Field("k", INT()), Field("ts", TS), Field("k0", INT()), Field("ts0", TS))
    node = Node(1, TEMPORAL_JOIN.name, (0, 0), schema, TemporalJoinParams(
        kind="LEFT", left_keys=(0,), right_keys=(0,), left_time=1, right_time=1,
        condition=None, left_width=2,
    ))  # fmt: skip
    op, out = TemporalJoinOperator(node, OperatorContext(mode=STREAMING, config={})), Output()
    op.process_batch(_batch([1, 1, 1], [0, 10, 20]), 1, out)
    op.process_batch(_batch([1, 1, 1, 2], [5, 10, 19, 30]), 0, out)
    op.on_watermark(15, out)
    assert sorted(_rows(out)) == [(1, 5.0, 1, 0.0), (1, 10.0, 1, 10.0)]
    op.on_watermark(MAX_WATERMARK, out)
    assert sorted(_rows(out), key=str) == sorted([(1, 19.0, 1, 10.0), (2, 30.0, None, None)], key=str)


# ---------------------------------------------------------------------- processing time
class _Clock:
    """The processing-time clock (runtime.state.ttl), set by the test."""

    def __init__(self) -> None:
        self.now = 10_000

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def clock() -> Iterator[_Clock]:
    c = _Clock()
    prev = set_clock(c)
    yield c
    set_clock(prev)


def _proctime(kind: str) -> IntervalJoinOperator:
    """`r.pt - l.pt` in [0, 1000] on processing time; the time columns' values are ignored
    (a row's time is the clock when it arrives, as in Flink's ProcTimeIntervalJoin)."""
    node = Node(1, INTERVAL_JOIN.name, (0, 0), SCHEMA, IntervalJoinParams(
        kind=kind, left_keys=(0,), right_keys=(0,), left_time=1, right_time=1,
        lower_ms=0, upper_ms=1000, condition=None, left_width=2, proctime=True,
    ))  # fmt: skip
    return IntervalJoinOperator(node, OperatorContext(mode=STREAMING, config={}))


def test_proctime_interval_join_inner_expires_by_the_clock(clock: _Clock) -> None:
    op, out = _proctime("INNER"), Output()
    op.process_batch(_batch([1, 2], [0, 0]), 0, out)  # left rows at 10_000
    clock.now = 10_600
    op.process_batch(_batch([1], [0]), 1, out)  # d = 600: joins key 1
    assert [(r[0], r[2]) for r in _rows(out)] == [(1, 1)]
    # A right row at s can only meet left rows at <= s (d >= 0); later ones come after it,
    # so it is not kept (Flink's check: operator time < s - lower).
    assert (op.sides[0].size, op.sides[1].size) == (2, 0)
    clock.now = 11_000
    op.process_batch(_batch([2, 3], [0, 0]), 1, out)  # d = 1000: the upper bound, inclusive
    assert [(r[0], r[2]) for r in _rows(out)] == [(2, 2)]
    clock.now = 11_001  # left rows' range is over (10_000 + 1000 < 11_001)
    op.on_timer(out)  # sources idle: state shrinks by the clock alone
    assert (op.sides[0].size, op.sides[1].size) == (0, 0)
    op.process_batch(_batch([1], [0]), 1, out)  # d = 1001: nothing left to join with
    assert _rows(out) == []


def test_proctime_interval_join_left_pads_on_expiry_and_passes_watermarks(clock: _Clock) -> None:
    op, out = _proctime("LEFT"), Output()
    op.process_batch(_batch([1, 2], [0, 0]), 0, out)
    op.on_watermark(123_456, out)
    assert out.watermarks[-1] == 123_456, "no hold-back in processing time"
    assert _rows(out) == [], "watermarks do not expire processing-time rows"
    clock.now = 10_500
    op.process_batch(_batch([1], [0]), 1, out)
    assert [(r[0], r[2]) for r in _rows(out)] == [(1, 1)]
    clock.now = 10_900
    op.on_timer(out)
    assert _rows(out) == [], "still inside the bound"
    clock.now = 11_001
    op.on_timer(out)
    assert _rows(out) == [(2, 0.0, None, None)], "only the unmatched left row is padded"
    assert op.sides[0].size == 0


def test_proctime_interval_join_emits_nothing_more_at_end_of_input(clock: _Clock) -> None:
    """Flink cancels pending processing-time timers when a bounded input ends: rows still
    inside their range are not padded."""
    op, out = _proctime("FULL"), Output()
    op.process_batch(_batch([1], [0]), 0, out)
    op.process_batch(_batch([2], [0]), 1, out)
    # the right row cannot meet later left rows (see above): padded at once, as in Flink
    assert _rows(out) == [(None, None, 2, 0.0)]
    assert op.sides[0].size == 1
    op.on_watermark(MAX_WATERMARK, out)
    op.end_input(0, out)
    op.end_input(1, out)
    assert _rows(out) == []
