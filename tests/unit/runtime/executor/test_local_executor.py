"""LocalExecutor: result batches, watermarks over several inputs, end of input, stop,
errors, metrics."""

from __future__ import annotations

import threading
from types import ModuleType

import pyarrow as pa
import pytest

from runtime.connectors.base import ConfigOption, ConnectorFactory, Source, SplitReader, register_connector
from runtime.errors import DataError
from runtime.executor.local import LocalExecutor
from runtime.expr.ir import Literal
from runtime.graph import JobGraph
from runtime.operators.source import TableSourceScanParams
from runtime.types import BIGINT, INT, STRING, Field


class _Endless(Source):
    """Unbounded: one row per poll, a new split discovered after the first drains."""

    produced_schema = (Field("x", BIGINT()),)

    def __init__(self) -> None:
        self.discovered = 0

    @property
    def bounded(self) -> bool:
        return False

    def splits(self) -> list[str]:
        return ["s0"]

    def discover_splits(self) -> list[str]:
        self.discovered += 1
        return ["s1"] if self.discovered == 1 else []

    def create_reader(self, split_id: str) -> SplitReader:
        class R(SplitReader):
            n = 0

            def read(self, max_rows: int) -> pa.RecordBatch | None:
                R.n += 1
                if split_id == "s0" and R.n > 3:
                    return None
                return pa.RecordBatch.from_arrays([pa.array([R.n], pa.int64())], names=["x"])

        return R()


class _Broken(Source):
    produced_schema = (Field("x", BIGINT()),)

    def splits(self) -> list[str]:
        return ["a"]

    def create_reader(self, split_id: str) -> SplitReader:
        class R(SplitReader):
            def read(self, max_rows: int) -> pa.RecordBatch | None:
                raise DataError("bad row", path="f.csv", line=3)

        return R()


register_connector(
    ConnectorFactory(
        "test-endless",
        "",
        (ConfigOption("x"),),
        create_source=lambda o, s, p, c: _Endless(),
        is_bounded=lambda o: False,
    )
)
register_connector(ConnectorFactory("test-broken", "", (), create_source=lambda o, s, p, c: _Broken()))


def _scan(nid: int, connector: str) -> object:
    from runtime.graph import Node

    f = (Field("x", BIGINT()),)
    return Node(
        nid,
        "TableSourceScan",
        (),
        f,
        TableSourceScanParams("t", connector, {}, f, None, False),
    )


def test_unbounded_source_runs_until_stopped_and_yields_as_it_goes() -> None:
    stop = threading.Event()
    g = JobGraph((_scan(1, "test-endless"),), result_node=1)
    ex = LocalExecutor(g, stop)
    seen = []
    for b in ex.run():
        assert b.schema.names == ["x", "__op"]
        assert b.column(1).type == pa.int8()
        seen += b.column(0).to_pylist()
        if len(seen) >= 6:
            stop.set()
    assert len(seen) == 6
    assert ex.metrics[1].rows_out == 6


def test_source_errors_propagate_unchanged() -> None:
    g = JobGraph((_scan(1, "test-broken"),), result_node=1)
    with pytest.raises(DataError, match="line 3"):
        list(LocalExecutor(g).run())


def test_watermark_is_min_over_union_inputs(kit: ModuleType, tmp_path) -> None:
    """Two sources, one far ahead: windows fire only when the slower input passes them;
    with both ended MAX_WATERMARK fires the rest."""
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text("2024-01-01 00:00:01.000,a,1\n2024-01-01 00:01:00.000,a,2\n")
    b.write_text("2024-01-01 00:00:02.000,b,3\n")
    ev = kit.EVENTS
    wm = kit.ref(0, kit.ts3())
    nodes = [
        kit.scan(1, a, ev),
        kit.node(2, "WatermarkAssigner", (1,), ev, rowtime_index=0, watermark=wm, idle_timeout_ms=None),
        kit.scan(3, b, ev),
        kit.node(4, "WatermarkAssigner", (3,), ev, rowtime_index=0, watermark=wm, idle_timeout_ms=None),
        kit.node(5, "Union", (2, 4), ev),
        kit.node(
            6,
            "WindowAggregate",
            (5,),
            [Field("cnt", BIGINT(False)), Field("window_end", kit.ts3(False))],
            window=kit.window("TUMBLE", size_ms=10_000),
            time_index=0,
            grouping=[],
            aggs=[kit.agg("count", [], BIGINT(False))],
            window_props=["window_end"],
        ),
    ]
    rows, ex = kit.run(nodes, 6)
    assert [r["row"] for r in rows] == [["2", "2024-01-01 00:00:10.000"], ["1", "2024-01-01 00:01:10.000"]]
    assert ex.metrics[6].rows_in == 3


def test_batch_mode_has_no_watermarks(kit: ModuleType) -> None:
    f = [Field("x", INT(False))]
    vals = kit.node(1, "Values", (), f, rows=[[Literal(1, INT(False))]])
    rows, ex = kit.run([vals], 1, kit.BATCH)
    assert rows == [{"op": "+I", "row": ["1"]}]


def test_changelog_into_group_aggregate_retracts(kit: ModuleType) -> None:
    """COUNT per key, then MIN/MAX/SUM/COUNT DISTINCT over those counts: the second
    aggregate consumes -U/+U and must retract (MIN/MAX keep value multisets)."""
    case = "044_groupby_retraction_changelog"
    src = [Field("k", STRING()), Field("v", INT())]
    c1 = [Field("k", STRING()), Field("c", BIGINT(False))]
    aggs = [
        kit.agg("min", [1], BIGINT()),
        kit.agg("max", [1], BIGINT()),
        kit.agg("sum", [1], BIGINT()),
        kit.agg("count", [1], BIGINT(False), distinct=True),
        kit.agg("count", [], BIGINT(False)),
    ]
    out = [Field(n, a["type"]) for n, a in zip(["mn", "mx", "s", "cd", "n"], aggs, strict=True)]
    for rpb in (1, 3, 100):
        nodes = [
            kit.scan(1, kit.CASES / case / "kv.csv", src, rpb),
            kit.node(
                2, "GroupAggregate", (1,), c1, "I,UB,UA", grouping=[0], aggs=[kit.agg("count", [], BIGINT(False))]
            ),
            kit.node(3, "GroupAggregate", (2,), out, "I,UB,UA,D", grouping=[], aggs=aggs),
        ]
        rows, _ = kit.run(nodes, 3)
        # final counts: a=5, b=3, c=1
        assert kit.final_table(rows) == [("1", "5", "9", "3", "3")]
        batch_rows, _ = kit.run(nodes, 3, kit.BATCH)
        assert kit.as_rows(batch_rows) == [("1", "5", "9", "3", "3")]


def test_key_deleted_when_count_drops_to_zero(kit: ModuleType, tmp_path) -> None:
    """A changelog that retracts every row of a key produces -D for it."""
    import numpy as np

    from runtime.batch import with_system_columns
    from runtime.graph import STREAMING
    from runtime.operators.base import OperatorContext, Output, create_operator

    fields = [Field("k", STRING()), Field("n", BIGINT(False))]
    node = kit.node(
        2, "GroupAggregate", (1,), fields, "I,UB,UA,D", grouping=[0], aggs=[kit.agg("count", [], BIGINT(False))]
    )
    op = create_operator(node, OperatorContext(mode=STREAMING, config={}))
    op.input_changelog_modes = ["I,UB,UA,D"]
    data = pa.RecordBatch.from_arrays([pa.array(["a", "a"])], names=["k"])
    out = Output()
    op.process_batch(with_system_columns(data, np.array([0, 0], dtype=np.int8)), 0, out)
    op.process_batch(with_system_columns(data.slice(0, 1), np.array([3], dtype=np.int8)), 0, out)
    op.process_batch(with_system_columns(data.slice(0, 1), np.array([3], dtype=np.int8)), 0, out)
    got = [(r["__op"], r["k"], r["n"]) for b in out.batches for r in b.to_pylist()]
    assert got == [(0, "a", 2), (1, "a", 2), (2, "a", 1), (3, "a", 1)]
    assert len(op.state) == 0


class _Silent(Source):
    """Unbounded and empty: holds the watermark back unless declared idle."""

    produced_schema = ()

    @property
    def bounded(self) -> bool:
        return False

    def splits(self) -> list[str]:
        return []


register_connector(
    ConnectorFactory("test-silent", "", (), create_source=lambda o, s, p, c: _Silent(), is_bounded=lambda o: False)
)


@pytest.mark.parametrize("idle_ms", [30, None])
def test_idle_input_stops_holding_back_the_watermark(kit: ModuleType, tmp_path, idle_ms) -> None:
    from runtime.graph import Node

    a = tmp_path / "a.csv"
    a.write_text("2024-01-01 00:00:01.000,a,1\n2024-01-01 00:01:00.000,a,2\n")
    ev = kit.EVENTS
    wm = kit.ref(0, kit.ts3())
    silent = Node(
        3,
        "TableSourceScan",
        (),
        tuple(ev),
        TableSourceScanParams("s", "test-silent", {}, tuple(ev), None, False),
    )
    nodes = [
        kit.scan(1, a, ev),
        kit.node(2, "WatermarkAssigner", (1,), ev, rowtime_index=0, watermark=wm, idle_timeout_ms=None),
        silent,
        kit.node(4, "WatermarkAssigner", (3,), ev, rowtime_index=0, watermark=wm, idle_timeout_ms=idle_ms),
        kit.node(5, "Union", (2, 4), ev),
        kit.node(
            6,
            "WindowAggregate",
            (5,),
            [Field("cnt", BIGINT(False))],
            window=kit.window("TUMBLE", size_ms=10_000),
            time_index=0,
            grouping=[],
            aggs=[kit.agg("count", [], BIGINT(False))],
            window_props=[],
        ),
    ]
    stop = threading.Event()
    timer = threading.Timer(0.6, stop.set)
    timer.start()
    try:
        got = []
        for b in LocalExecutor(JobGraph(tuple(nodes), result_node=6), stop).run():
            got += b.column(0).to_pylist()
            if len(got) == 2:
                stop.set()
    finally:
        timer.cancel()
    assert got == ([1, 1] if idle_ms else [])
