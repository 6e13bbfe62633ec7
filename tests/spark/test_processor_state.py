"""The stateful processor (runtime/executor/spark/stateful.py) without a Spark cluster: Spark's
state handle is replaced by an in-memory one with the same calls, so the tests see exactly
which state entries each call writes.

- Restored from the state store (a fresh worker: empty cache) the operator continues where it
  stopped: the same changelog as one uninterrupted operator.
- State is written incrementally: a batch that changes one key of a large state rewrites a
  few chunks, not the whole snapshot.
- The key groups are the parallel executor's (`key_groups_of_rows`).
- A ROW_NUMBER tie among different rows across the kept range fails the job (the local runner
  breaks it by arrival order, which Spark does not define); equal rows and ties inside the
  range do not.
- Rows an upstream processor emitted before the watermark advanced (`__bw` below it) are
  applied before the watermark fires windows; the others after (late for closed windows).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None or importlib.util.find_spec("pandas") is None,
    reason="PySpark is not installed: pip install 'streamsql[spark]'",
)


class FakeValueState:
    def __init__(self) -> None:
        self.value: tuple[Any, ...] | None = None

    def exists(self) -> bool:
        return self.value is not None

    def get(self) -> tuple[Any, ...] | None:
        return self.value

    def update(self, v: tuple[Any, ...]) -> None:
        self.value = v


class FakeMapState:
    def __init__(self) -> None:
        self.data: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self.writes = 0

    def getValue(self, k: tuple[Any, ...]) -> tuple[Any, ...] | None:  # noqa: N802 - Spark's names
        return self.data.get(k)

    def updateValue(self, k: tuple[Any, ...], v: tuple[Any, ...]) -> None:  # noqa: N802
        self.data[k] = v
        self.writes += 1

    def removeKey(self, k: tuple[Any, ...]) -> None:  # noqa: N802
        self.data.pop(k, None)
        self.writes += 1

    def iterator(self) -> Iterator[tuple[tuple[Any, ...], tuple[Any, ...]]]:
        return iter(list(self.data.items()))


class FakeHandle:
    """One key group's state, kept across processor instances (as Spark's state store does)."""

    def __init__(self) -> None:
        self.meta = FakeValueState()
        self.origin = FakeValueState()
        self.chunks = FakeMapState()
        self.slots = FakeMapState()
        self.timers: set[int] = set()

    def getValueState(self, name: str, schema: str) -> FakeValueState:  # noqa: N802
        return self.origin if name == "origin" else self.meta

    def getMapState(self, name: str, key: str, value: str) -> FakeMapState:  # noqa: N802
        return self.slots if name == "slots" else self.chunks

    def listTimers(self) -> Iterator[int]:  # noqa: N802
        return iter(sorted(self.timers))

    def registerTimer(self, t: int) -> None:  # noqa: N802
        self.timers.add(t)

    def deleteTimer(self, t: int) -> None:  # noqa: N802
        self.timers.discard(t)


class Timers:
    def __init__(self, wm: int = 0) -> None:
        self.wm = wm

    def getCurrentWatermarkInMs(self) -> int:  # noqa: N802
        return self.wm


_DATAGEN_T = "CREATE TABLE t (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '1')"


def _plan(sql: str, ddl: str = _DATAGEN_T) -> Any:
    """The STREAMING JobGraph of `sql` over the table `ddl` creates."""
    from streamsql import TableEnvironment

    env = TableEnvironment.create({"execution.runtime-mode": "streaming"})
    env.execute_sql(ddl)
    return env._planner().plan_query(env.parse(sql)[0]).graph


def _node(sql: str, operator: str, ddl: str = _DATAGEN_T) -> Any:
    """The `operator` node of `sql`'s STREAMING JobGraph."""
    return next(n for n in _plan(sql, ddl).nodes if n.operator == operator)


def _graph() -> Any:
    return _plan("SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k")


def _rows(keys: np.ndarray, values: np.ndarray, origin: int | None = None, seq: int = 0) -> Any:
    """One packed row (as `Packer` makes them) of `keys`/`values` from task `origin`."""
    import pandas as pd

    from runtime.batch import ROW_KIND
    from runtime.executor.spark.stateful import encode

    batch = pa.RecordBatch.from_arrays(
        [pa.array(keys, pa.int64()), pa.array(values, pa.int64()), pa.array(np.zeros(len(keys), np.int8))],
        names=["k", "v", ROW_KIND],
    )
    frame = pd.DataFrame({"_0": [0], "_1": [seq], "_2": [0], "_3": [encode(batch)], "_4": [None]})
    frame["_5"] = pd.array([origin], dtype="Int64")
    return frame


def _changelog(frames: list[Any]) -> list[tuple[Any, ...]]:
    from runtime.batch import ROW_KIND
    from runtime.executor.spark.stateful import PAYLOAD, decode

    out = []
    for f in frames:
        for payload in f[PAYLOAD]:
            b = decode(payload)
            kinds = b.column(ROW_KIND).to_pylist()
            out += list(zip(kinds, *[b.column(i).to_pylist() for i in range(3)], strict=True))
    return out


def _processor(graph: Any, uid: str, handle: FakeHandle) -> Any:
    from runtime.executor.spark.stateful import processor_class

    agg = next(n for n in graph.nodes if n.operator == "GroupAggregate")
    modes = [graph.node(i).changelog_mode for i in agg.inputs]
    p = processor_class()(uid, agg, dict(graph.config or {}), modes, False)
    p.init(handle)
    return p


def test_restored_operator_continues_and_writes_only_changed_keys() -> None:
    """A GroupAggregate ("generic" checkpointing) keeps one state entry per key: a batch
    writes the entries of the keys it changed (and the small rest of the operator), not the
    whole snapshot; a new worker restores every entry and continues exactly."""
    from runtime.executor.spark import stateful

    graph = _graph()
    handle = FakeHandle()
    n = 20_000
    keys = np.arange(n, dtype=np.int64)
    p = _processor(graph, "job-a", handle)
    first = _changelog(list(p.handleInputRows((0,), iter([_rows(keys, keys)]), Timers())))
    assert len(first) == n
    assert handle.slots.writes == n and len(handle.slots.data) == n  # one entry per key
    rest = handle.chunks.writes
    assert rest <= 2  # the rest of the operator is small

    # A new worker (empty cache) restores from the state store and continues.
    stateful._CACHE.clear()
    handle.chunks.writes = handle.slots.writes = 0
    p2 = _processor(graph, "job-a", handle)
    change = _changelog(list(p2.handleInputRows((0,), iter([_rows(np.array([5]), np.array([100]))]), Timers())))
    assert change == [(1, 5, 5, 1), (2, 5, 105, 2)]
    assert handle.slots.writes == 1  # one key changed: one entry written
    assert handle.chunks.writes <= rest

    # The cached operator (same version as the state store) gives the same answer as a restore.
    handle.chunks.writes = handle.slots.writes = 0
    again = _changelog(list(p2.handleInputRows((0,), iter([_rows(np.array([5, 7]), np.array([1, 1]))]), Timers())))
    assert again == [(1, 5, 105, 2), (2, 5, 106, 3), (1, 7, 7, 1), (2, 7, 8, 2)]
    assert handle.slots.writes == 2

    # Restored again: new keys after the restored ones, same values.
    stateful._CACHE.clear()
    p3 = _processor(graph, "job-a", handle)
    more = _changelog(list(p3.handleInputRows((0,), iter([_rows(np.array([n + 1, 5]), np.array([1, 1]))]), Timers())))
    assert more == [(0, n + 1, 1, 1), (1, 5, 106, 3), (2, 5, 107, 4)]


def test_count_distinct_state_restores_from_per_key_entries() -> None:
    """COUNT(DISTINCT) keeps its (key, value) pairs in an accumulator with its own state
    (`__getstate__`): it stays whole in the rest of the operator, the other aggregates per key."""
    from runtime.executor.spark import stateful
    from runtime.executor.spark.stateful import processor_class

    sql = "SELECT k, COUNT(DISTINCT v), SUM(v) FROM t GROUP BY k"
    agg = _node(sql, "GroupAggregate")
    handle = FakeHandle()
    p = processor_class()("job-f", agg, {}, ["I"], False)
    p.init(handle)
    list(p.handleInputRows((0,), iter([_rows(np.array([1, 1, 2]), np.array([5, 6, 5]))]), Timers()))
    stateful._CACHE.clear()
    p2 = processor_class()("job-f", agg, {}, ["I"], False)
    p2.init(handle)
    out = _changelog(list(p2.handleInputRows((0,), iter([_rows(np.array([1, 2]), np.array([5, 7]))]), Timers())))
    assert out == [(1, 1, 2, 11), (2, 1, 2, 16), (1, 2, 1, 5), (2, 2, 2, 12)]


def test_operators_without_per_key_state_keep_their_snapshot_in_chunks() -> None:
    """A "custom" operator (here ROW_NUMBER Top-N) is saved as its whole snapshot in the state
    format (no pickle), cut into chunks of which only changed ones are rewritten."""
    from runtime.executor.spark import stateful
    from runtime.executor.spark.stateful import PAYLOAD, processor_class

    sql = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn FROM t) WHERE rn <= 1"
    rank = _node(sql, "Rank")
    handle = FakeHandle()
    p = processor_class()("job-e", rank, {}, ["I"], False)
    p.init(handle)
    list(p.handleInputRows((0,), iter([_rows(np.array([1, 2]), np.array([10, 20]))]), Timers()))
    assert handle.chunks.writes >= 1 and not handle.slots.data
    assert handle.chunks.data[(0,)][0][:4] == b"SSQS"  # the state format's magic, not a pickle
    stateful._CACHE.clear()
    p2 = processor_class()("job-e", rank, {}, ["I"], False)
    p2.init(handle)
    frames = list(p2.handleInputRows((0,), iter([_rows(np.array([1]), np.array([30]))]), Timers()))
    assert sorted(decode_rows([x for f in frames for x in f[PAYLOAD]])) == [(1, 10), (1, 30)]  # -U, +U


def test_event_time_timer_is_armed_at_watermark_plus_one() -> None:
    graph = _graph()
    handle = FakeHandle()
    from runtime.executor.spark.stateful import processor_class

    agg = next(n for n in graph.nodes if n.operator == "GroupAggregate")
    p = processor_class()("job-b", agg, {}, ["I"], True)
    p.init(handle)
    list(p.handleInputRows((0,), iter([_rows(np.array([1]), np.array([1]))]), Timers(5000)))
    assert handle.timers == {5001}
    list(p.handleExpiredTimer((0,), Timers(9000), None))
    assert handle.timers == {9001}


def test_buckets_are_the_parallel_executors_key_groups() -> None:
    from runtime.executor.spark.stateful import BUCKET, Packer, decode
    from runtime.state.keygroups import key_groups_of_rows
    from runtime.types import BIGINT, STRING, Field

    fields = (Field("k", STRING()), Field("v", BIGINT()))
    spark_rows = pa.RecordBatch.from_arrays(
        [pa.array(["a", "b", "c", "a"]), pa.array([1, 2, 3, 4], pa.int64()), pa.array([0, 0, 0, 0], pa.int8())],
        names=["c0", "c1", "__op"],
    )
    packed = list(Packer(fields, (0,), 0, 128)(iter([spark_rows])))[0]
    expected = key_groups_of_rows([pa.array(["a", "b", "c", "a"])], 4, 128)
    for bucket, payload in zip(packed.column(BUCKET).to_pylist(), packed.column("__payload").to_pylist(), strict=True):
        rows = decode(payload)
        ks = rows.column(0).to_pylist()
        assert {int(g) for k, g in zip(["a", "b", "c", "a"], expected, strict=True) if k in ks} == {bucket}
    assert sum(decode(p).num_rows for p in packed.column("__payload").to_pylist()) == 4


def test_rows_emitted_before_the_watermark_are_applied_before_it_fires(tmp_path: Any) -> None:
    import pandas as pd

    from runtime.batch import ROW_KIND
    from runtime.executor.spark.stateful import PAYLOAD, encode, processor_class

    ddl = (
        f"CREATE TABLE e (k BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    sql = "SELECT k, COUNT(*) FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end"
    agg = _node(sql, "WindowAggregate", ddl)

    def payload(ts: int) -> bytes:  # a row (k = 1) as an upstream processor emits it (no `__wm`)
        cols = [pa.array([1], pa.int64()), pa.array([ts], pa.timestamp("ms")), pa.array([0], pa.int8())]
        return encode(pa.RecordBatch.from_arrays(cols, names=["k", "ts", ROW_KIND]))

    p = processor_class()("job-c", agg, {}, ["I"], True)
    p.init(FakeHandle())
    # Both rows fall in [0, 10 s) and reach the processor with the watermark at 20 s: the first
    # was emitted upstream before that watermark (counted), the second after it (late: dropped).
    rows = pd.DataFrame({"_0": [0, 0], "_1": [0, 1], "_2": [0, 0], "_3": [payload(1000), payload(2000)]})
    rows["_4"] = pd.array([-(2**63), None], dtype="Int64")
    out = list(p.handleInputRows((0,), iter([rows]), Timers(20_000)))
    fired = [decode_rows(f[PAYLOAD]) for f in out]
    assert [r for rs in fired for r in rs] == [(1, 1)]


def decode_rows(payloads: Any) -> list[tuple[Any, ...]]:
    from runtime.executor.spark.stateful import decode

    out = []
    for payload in payloads:
        b = decode(payload)
        out += list(zip(b.column(0).to_pylist(), b.column(1).to_pylist(), strict=True))
    return out


@pytest.mark.parametrize(
    ("values", "tie"),
    [
        ([(1, 30), (2, 20), (3, 20)], True),  # ranks 2 and 3 tie on v = 20: which row is kept is arrival order
        ([(2, 30), (1, 20), (1, 20)], False),  # equal rows tie across the cut: either order keeps the same rows
        ([(1, 20), (2, 20), (3, 10)], False),  # a tie inside the range (no rank number output)
    ],
)
def test_row_number_tie_across_the_range_fails_the_job(values: list[tuple[int, int]], tie: bool) -> None:
    from runtime.errors import JobError
    from runtime.executor.spark.stateful import PAYLOAD, processor_class

    sql = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM t) WHERE rn <= 2"
    rank = _node(sql, "Rank")
    p = processor_class()("job-d", rank, {}, ["I"], False)
    p.init(FakeHandle())
    keys, vals = np.array([k for k, _ in values]), np.array([v for _, v in values])
    if tie:
        with pytest.raises(JobError, match="arrival order"):
            list(p.handleInputRows((0,), iter([_rows(keys, vals)]), Timers()))
    else:
        frames = list(p.handleInputRows((0,), iter([_rows(keys, vals)]), Timers()))
        assert len(decode_rows([x for f in frames for x in f[PAYLOAD]])) == 2


TOP2 = "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY v DESC) AS rn FROM t) WHERE rn <= 2"


def test_a_tie_among_rows_of_one_ordered_task_is_accepted_across_batches_and_restores() -> None:
    """Rows of one source task (`origin`) reach the processor in the local runner's order, so
    their ties are broken as the local runner breaks them: the first row wins, as it does there.
    The key group remembers its origin in Spark's state: after a restore, rows of another task
    make a tie with the held rows a genuine one, and the job fails."""
    from runtime.errors import JobError
    from runtime.executor.spark import stateful
    from runtime.executor.spark.stateful import processor_class

    rank = _node(TOP2, "Rank")
    handle = FakeHandle()
    p = processor_class()("job-o", rank, {}, ["I"], False)
    p.init(handle)
    out = list(p.handleInputRows((0,), iter([_rows(np.array([1, 2]), np.array([30, 20]), origin=7)]), Timers()))
    out += list(p.handleInputRows((0,), iter([_rows(np.array([3]), np.array([20]), origin=7)]), Timers()))
    kept = {(k, v) for k, v in decode_rows([x for f in out for x in f["__payload"]])}
    assert kept == {(1, 30), (2, 20)}  # k = 3 ties with k = 2 on v = 20 and arrived later
    assert handle.origin.value == (7,)
    stateful._CACHE.clear()  # a fresh worker: the processor restores from the state store
    p2 = processor_class()("job-o", rank, {}, ["I"], False)
    p2.init(handle)
    with pytest.raises(JobError, match="Rank .*arrival order"):
        list(p2.handleInputRows((0,), iter([_rows(np.array([4]), np.array([20]), origin=8)]), Timers()))


def test_a_tie_among_rows_of_two_tasks_fails_the_job() -> None:
    """The same tie with its rows from two source tasks (two files, two partitions): Spark does
    not define which comes first, so the job fails naming the operator."""
    from runtime.errors import JobError
    from runtime.executor.spark.stateful import processor_class

    p = processor_class()("job-t", _node(TOP2, "Rank"), {}, ["I"], False)
    p.init(FakeHandle())
    frames = [_rows(np.array([1, 2]), np.array([30, 20]), origin=7), _rows(np.array([3]), np.array([20]), 8, seq=1)]
    with pytest.raises(JobError, match="Rank .*arrival order"):
        list(p.handleInputRows((0,), iter(frames), Timers()))


def test_the_pickled_processor_does_not_carry_the_worker_cache() -> None:
    """The processor class goes by reference (stateful.StreamsqlProcessor), not by value with
    the module globals its methods read: operators cached in this process (`_CACHE`, filled
    by the tests above) are never shipped with a job (they once pushed a processor past
    Spark's 1 MiB broadcast threshold in the full suite)."""
    from pyspark import cloudpickle

    from runtime.executor.spark import stateful

    cls = stateful.processor_class()
    stateful._CACHE[("big", 0)] = (1, b"x" * 2_000_000, [])
    try:
        agg = next(n for n in _graph().nodes if n.operator == "GroupAggregate")
        p = cls("job", agg, {}, ["I"], False)
        assert len(cloudpickle.dumps(p)) < 100_000
        assert cloudpickle.loads(cloudpickle.dumps(cls)) is cls
    finally:
        stateful._CACHE.pop(("big", 0), None)
