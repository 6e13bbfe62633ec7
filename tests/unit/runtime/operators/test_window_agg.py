"""WindowAggregate over the conformance cases' own input, built as JobGraphs by hand."""

from __future__ import annotations

from types import ModuleType

import pytest

from runtime.types import BIGINT, INT, STRING, Field


def _reorder(rows: list[dict], order: list[int]) -> list[dict]:
    return [{"op": r["op"], "row": [r["row"][i] for i in order]} for r in rows]


def _tumble_048(kit: ModuleType, mode: str, rows_per_batch: int = 1000):
    nodes = kit.events_with_watermark("048_tumble_tvf_edges_late", 3000, rows_per_batch)
    ts = kit.ts3()
    out = [
        Field("k", STRING()),
        Field("cnt", BIGINT(False)),
        Field("sum_v", INT()),
        Field("max_ts", ts),
        Field("window_start", kit.ts3(False)),
        Field("window_end", kit.ts3(False)),
        Field("window_time", kit.ts3(False)),
    ]
    nodes.append(
        kit.node(
            3,
            "WindowAggregate",
            (2,),
            out,
            window=kit.window("TUMBLE", size_ms=10_000),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT()), kit.agg("max", [0], ts)],
            window_props=["window_start", "window_end", "window_time"],
        )
    )
    rows, ex = kit.run(nodes, 3, mode)
    return _reorder(rows, [4, 5, 6, 0, 1, 2, 3]), ex


@pytest.mark.parametrize("rows_per_batch", [1000, 1, 5])
def test_048_tumble_streaming_drops_late_rows(kit: ModuleType, rows_per_batch: int) -> None:
    rows, ex = _tumble_048(kit, kit.STREAMING, rows_per_batch)
    assert kit.as_rows(rows) == kit.as_rows(kit.expected("048_tumble_tvf_edges_late", "streaming.jsonl"))
    assert all(r["op"] == "+I" for r in rows)
    assert ex.metrics[3].late_rows_dropped == 3
    # windows fire in window order
    ends = [r["row"][1] for r in rows]
    assert ends == sorted(ends)


def test_048_tumble_batch_keeps_everything(kit: ModuleType) -> None:
    rows, ex = _tumble_048(kit, kit.BATCH)
    assert kit.as_rows(rows) == kit.as_rows(kit.expected("048_tumble_tvf_edges_late", "batch.jsonl"))
    assert ex.metrics[3].late_rows_dropped == 0


@pytest.mark.parametrize("mode,file", [("STREAMING", "streaming.jsonl"), ("BATCH", "batch.jsonl")])
def test_049_tumble_with_offset(kit: ModuleType, mode: str, file: str) -> None:
    nodes = kit.events_with_watermark("049_tumble_tvf_offset", 1000)
    nodes.append(
        kit.node(
            3,
            "Calc",
            (2,),
            [Field("ts", kit.ts3()), Field("vs", STRING())],
            projections=[kit.ref(0, kit.ts3()), kit.Call("cast", (kit.ref(2, INT()),), STRING())],
            condition=None,
        )
    )
    nodes.append(
        kit.node(
            4,
            "WindowAggregate",
            (3,),
            [
                Field("cnt", BIGINT(False)),
                Field("vs", STRING()),
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
            ],
            window=kit.window("TUMBLE", size_ms=10_000, offset_ms=3_000),
            time_index=0,
            grouping=[],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("listagg", [1], STRING(), separator=",")],
            window_props=["window_start", "window_end"],
        )
    )
    rows, _ = kit.run(nodes, 4, mode)
    assert kit.as_rows(_reorder(rows, [2, 3, 0, 1])) == kit.as_rows(kit.expected("049_tumble_tvf_offset", file))


@pytest.mark.parametrize("mode,file", [("STREAMING", "streaming.jsonl"), ("BATCH", "batch.jsonl")])
def test_051_cumulate(kit: ModuleType, mode: str, file: str) -> None:
    nodes = kit.events_with_watermark("051_cumulate_tvf", 1000)
    nodes.append(
        kit.node(
            3,
            "WindowAggregate",
            (2,),
            [
                Field("k", STRING()),
                Field("cnt", BIGINT(False)),
                Field("sum_v", INT()),
                Field("max_v", INT()),
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
            ],
            window=kit.window("CUMULATE", size_ms=15_000, step_ms=5_000),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT()), kit.agg("max", [2], INT())],
            window_props=["window_start", "window_end"],
        )
    )
    rows, _ = kit.run(nodes, 3, mode)
    assert kit.as_rows(_reorder(rows, [4, 5, 0, 1, 2, 3])) == kit.as_rows(kit.expected("051_cumulate_tvf", file))


def _session(kit: ModuleType, case: str, mode: str, rows_per_batch: int):
    nodes = kit.events_with_watermark(case, 10_000, rows_per_batch)
    nodes.append(
        kit.node(
            3,
            "WindowAggregate",
            (2,),
            [
                Field("k", STRING()),
                Field("cnt", BIGINT(False)),
                Field("sum_v", INT()),
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
                Field("window_time", kit.ts3(False)),
            ],
            window=kit.window("SESSION", gap_ms=5_000, partition_keys=[1]),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT())],
            window_props=["window_start", "window_end", "window_time"],
        )
    )
    return kit.run(nodes, 3, mode)


@pytest.mark.parametrize("rows_per_batch", [1000, 1, 3])
def test_052_session_partition_by(kit: ModuleType, rows_per_batch: int) -> None:
    rows, ex = _session(kit, "052_session_tvf_partition_by", kit.STREAMING, rows_per_batch)
    got = _reorder(rows, [3, 4, 0, 1, 2])
    assert kit.as_rows(got) == kit.as_rows(kit.expected("052_session_tvf_partition_by", "streaming.jsonl"))
    assert ex.metrics[3].late_rows_dropped == 1


@pytest.mark.parametrize("rows_per_batch", [1000, 1])
def test_056_legacy_session_with_rowtime(kit: ModuleType, rows_per_batch: int) -> None:
    rows, _ = _session(kit, "056_legacy_group_window_session", kit.STREAMING, rows_per_batch)
    got = _reorder(rows, [0, 3, 4, 5, 1, 2])
    assert kit.as_rows(got) == kit.as_rows(kit.expected("056_legacy_group_window_session", "streaming.jsonl"))


def test_session_fires_between_rows_of_one_batch(kit: ModuleType, tmp_path) -> None:
    """A session that the watermark closes in the middle of a batch is emitted on its
    own; a later row touching its end starts a new session (Flink processes per row)."""
    p = tmp_path / "e.csv"
    p.write_text(
        "2024-01-01 00:00:01.000,a,1\n"
        "2024-01-01 00:00:20.000,b,2\n"  # watermark -> 10.000 (delay 10 s): a's [1, 6) fires
        "2024-01-01 00:00:05.500,a,3\n"  # own window [5.5, 10.5) is not late: a new session
    )
    nodes = [
        kit.scan(1, p, kit.EVENTS),
        kit.node(
            2,
            "WatermarkAssigner",
            (1,),
            kit.EVENTS,
            rowtime_index=0,
            watermark=kit.minus_interval(0, kit.ts3(), 10_000),
            idle_timeout_ms=None,
        ),
        kit.node(
            3,
            "WindowAggregate",
            (2,),
            [Field("k", STRING()), Field("cnt", BIGINT(False)), Field("window_start", kit.ts3(False))],
            window=kit.window("SESSION", gap_ms=5_000),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False))],
            window_props=["window_start"],
        ),
    ]
    rows, ex = kit.run(nodes, 3)
    assert kit.as_rows(rows) == [
        ("a", "1", "2024-01-01 00:00:01.000"),
        ("a", "1", "2024-01-01 00:00:05.500"),
        ("b", "1", "2024-01-01 00:00:20.000"),
    ]
    assert ex.metrics[3].late_rows_dropped == 0


@pytest.mark.parametrize("mode,file", [("STREAMING", "streaming.jsonl"), ("BATCH", "batch.jsonl")])
def test_054_legacy_tumble_with_having(kit: ModuleType, mode: str, file: str) -> None:
    nodes = kit.events_with_watermark("054_legacy_group_window_tumble", 3000)
    fields = [
        Field("k", STRING()),
        Field("cnt", BIGINT(False)),
        Field("sum_v", INT()),
        Field("ws", kit.ts3(False)),
        Field("we", kit.ts3(False)),
        Field("wrt", kit.ts3(False)),
    ]
    nodes.append(
        kit.node(
            3,
            "WindowAggregate",
            (2,),
            fields,
            window=kit.window("TUMBLE", size_ms=10_000),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT())],
            window_props=["window_start", "window_end", "window_time"],
        )
    )
    having = kit.Call("greater_than", (kit.ref(2, INT()), kit.Literal(2, INT(False))), kit.DataType("BOOLEAN"))
    nodes.append(
        kit.node(
            4,
            "Calc",
            (3,),
            [fields[i] for i in (0, 3, 4, 5, 1, 2)],
            projections=[kit.ref(i, fields[i].type) for i in (0, 3, 4, 5, 1, 2)],
            condition=having,
        )
    )
    rows, _ = kit.run(nodes, 4, mode)
    assert kit.as_rows(rows) == kit.as_rows(kit.expected("054_legacy_group_window_tumble", file))


@pytest.mark.parametrize("mode,file", [("STREAMING", "streaming.jsonl"), ("BATCH", "batch.jsonl")])
def test_058_hop_over_filtered_view(kit: ModuleType, mode: str, file: str) -> None:
    nodes = kit.events_with_watermark("058_window_over_filtered_view", 2000)
    boolean = kit.DataType("BOOLEAN")
    cond = kit.Call(
        "and",
        (
            kit.Call("greater_than_or_equal", (kit.ref(2, INT()), kit.Literal(2, INT(False))), boolean),
            kit.Call("is_not_null", (kit.ref(1, STRING()),), boolean.not_null()),
        ),
        boolean,
    )
    view = [Field("ts", kit.ts3()), Field("kk", STRING()), Field("v10", INT())]
    nodes.append(
        kit.node(
            3,
            "Calc",
            (2,),
            view,
            projections=[
                kit.ref(0, kit.ts3()),
                kit.ref(1, STRING()),  # UPPER(k) in the case; upper-cased below
                kit.Call("times", (kit.ref(2, INT()), kit.Literal(10, INT(False))), INT()),
            ],
            condition=cond,
        )
    )
    nodes.append(
        kit.node(
            4,
            "WindowAggregate",
            (3,),
            [
                Field("kk", STRING()),
                Field("cnt", BIGINT(False)),
                Field("s", INT()),
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
            ],
            window=kit.window("HOP", size_ms=20_000, slide_ms=10_000),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT())],
            window_props=["window_start", "window_end"],
        )
    )
    rows, _ = kit.run(nodes, 4, mode)
    got = _reorder(rows, [3, 4, 0, 1, 2])
    for r in got:
        r["row"][2] = r["row"][2].upper()
    assert kit.as_rows(got) == kit.as_rows(kit.expected("058_window_over_filtered_view", file))


def test_004_ltz_day_windows_align_to_session_zone(kit: ModuleType, tmp_path) -> None:
    import datetime as dt

    case = "004_ddl_ltz_timezone_shanghai"
    ltz = kit.TIMESTAMP_LTZ(3)
    # ts AS TO_TIMESTAMP_LTZ(ms, 3): precomputed into the file (the test connector reads
    # ISO text as UTC instants)
    lines = []
    for line in (kit.CASES / case / "events.csv").read_text().splitlines():
        ms, k = line.split(",")
        iso = dt.datetime.fromtimestamp(int(ms) / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        lines.append(f"{ms},{k},{iso}")
    path = tmp_path / "events.csv"
    path.write_text("\n".join(lines) + "\n")
    src = [Field("ms", BIGINT()), Field("k", STRING()), Field("ts", ltz)]
    nodes = [
        kit.scan(1, path, src),
        kit.node(2, "Exchange", (1,), src, distribution="forward", keys=[]),
        kit.node(3, "WatermarkAssigner", (2,), src, rowtime_index=2, watermark=kit.ref(2, ltz), idle_timeout_ms=None),
        kit.node(
            4,
            "WindowAggregate",
            (3,),
            [
                Field("cnt", BIGINT(False)),
                Field("ks", STRING()),
                Field("first_ts", ltz),
                Field("first_ms", BIGINT()),
                Field("ws", kit.ts3(False)),
                Field("we", kit.ts3(False)),
                Field("wrt", kit.TIMESTAMP_LTZ(3, False)),
            ],
            window=kit.window("TUMBLE", size_ms=86_400_000),
            time_index=2,
            grouping=[],
            aggs=[
                kit.agg("count", [], BIGINT(False)),
                kit.agg("listagg", [1], STRING(), separator=","),
                kit.agg("min", [2], ltz),
                kit.agg("min", [0], BIGINT()),
            ],
            window_props=["window_start", "window_end", "window_time"],
        ),
    ]
    g_rows, ex = kit.run(nodes, 4, config={"table.local-time-zone": "Asia/Shanghai"})
    expected = kit.expected(case, "streaming.jsonl")
    want = [
        (r["row"][0], r["row"][1], r["row"][2], r["row"][3], r["row"][4], r["row"][5], r["row"][8]) for r in expected
    ]
    got = []
    for r in g_rows:
        cnt, ks, first_ts, first_ms, ws, we, wrt = r["row"]
        got.append((ws, we, wrt, cnt, ks, first_ts, first_ms))
    # LTZ columns were rendered in UTC by kit.run; re-render in Shanghai
    assert [g[:2] for g in got] == [w[:2] for w in want]
    assert [g[3:5] for g in got] == [w[3:5] for w in want]
    assert [g[6] for g in got] == [w[6] for w in want]
    shanghai = [kit.shift_render(g[2], "Asia/Shanghai") for g in got]
    assert shanghai == [w[2] for w in want]
    assert [kit.shift_render(g[5], "Asia/Shanghai") for g in got] == [w[5] for w in want]


def test_session_batch_mode_has_no_lateness(kit: ModuleType) -> None:
    rows, ex = _session(kit, "052_session_tvf_partition_by", kit.BATCH, 4)
    got = kit.as_rows(_reorder(rows, [3, 4, 0, 1, 2]))
    # the late (05.000, a, 100) row now joins a's first session
    assert got[0] == ("2024-01-01 00:00:01.000", "2024-01-01 00:00:13.000", "a", "4", "108")
    assert len(got) == 5 and ex.metrics[3].late_rows_dropped == 0


def test_window_aggregate_rejects_changelog_input(kit: ModuleType) -> None:
    import numpy as np
    import pyarrow as pa

    from runtime.batch import with_system_columns
    from runtime.errors import JobError
    from runtime.operators.base import OperatorContext, Output, create_operator

    node = kit.node(
        3,
        "WindowAggregate",
        (2,),
        [Field("cnt", BIGINT(False))],
        window=kit.window("TUMBLE", size_ms=1000),
        time_index=0,
        grouping=[],
        aggs=[kit.agg("count", [], BIGINT(False))],
        window_props=[],
    )
    op = create_operator(node, OperatorContext(mode="STREAMING", config={}))
    data = pa.RecordBatch.from_arrays([pa.array([1], pa.timestamp("ms"))], names=["ts"])
    with pytest.raises(JobError, match="update and delete"):
        op.process_batch(with_system_columns(data, np.array([3], dtype=np.int8)), 0, Output())
