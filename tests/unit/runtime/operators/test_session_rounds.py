"""Session windows processed in vectorized rounds (runtime/operators/session.py) against a
row-by-row model of Flink's merging window operator, on random out-of-order input."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from runtime.types import BIGINT, INT, STRING, Field

GAP = 5_000
DELAY = 3_000
BASE = dt.datetime(2024, 1, 1)


def _events(seed: int, n: int) -> list[tuple[int, str, int]]:
    rnd = random.Random(seed)
    t, out = 0, []
    for _ in range(n):
        t += rnd.choice([0, 100, 400, 1_500, 4_000, 7_000])
        jitter = rnd.choice([0, 0, 0, -1_000, -2_500, -4_500, -9_000])  # some rows late
        out.append((max(0, t + jitter), rnd.choice("abcde"), rnd.randint(1, 9)))
    return out


def _model(events: list[tuple[int, str, int]]) -> tuple[list[tuple[str, int, int, int, int]], int]:
    """Flink's semantics row by row: before each row, sessions whose end - 1 <= watermark
    fire; a row whose merged session is still late is dropped; the watermark (max ts -
    DELAY) advances after the row."""
    wm = -(2**63)
    open_: dict[str, list[list[int]]] = {}
    out: list[tuple[str, int, int, int, int]] = []
    late = 0

    def fire(w: int) -> None:
        due = []
        for k, sessions in open_.items():
            for s in [s for s in sessions if s[1] - 1 <= w]:
                sessions.remove(s)
                due.append((s[1] - 1, s[0], k, s))
        for _, _, k, s in sorted(due):
            out.append((k, s[2], s[3], s[0], s[1]))

    for ts, k, v in events:
        fire(wm)
        sessions = open_.setdefault(k, [])
        touching = [s for s in sessions if s[0] <= ts + GAP and s[1] >= ts]
        start = min([ts] + [s[0] for s in touching])
        end = max([ts + GAP] + [s[1] for s in touching])
        if end - 1 <= wm:
            late += 1
        else:
            for s in touching:
                sessions.remove(s)
            sessions.append([start, end, 1 + sum(s[2] for s in touching), v + sum(s[3] for s in touching)])
        wm = max(wm, ts - DELAY)
    fire(2**62)
    return out, late


def _text(ms: int) -> str:
    return (BASE + dt.timedelta(milliseconds=ms)).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _run(kit: ModuleType, path: Path, rows_per_batch: int) -> tuple[list[dict[str, Any]], Any]:
    nodes = [
        kit.scan(1, path, kit.EVENTS, rows_per_batch),
        kit.node(
            2,
            "WatermarkAssigner",
            (1,),
            kit.EVENTS,
            rowtime_index=0,
            watermark=kit.minus_interval(0, kit.ts3(), DELAY),
            idle_timeout_ms=None,
        ),
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
            ],
            window=kit.window("SESSION", gap_ms=GAP, partition_keys=[1]),
            time_index=0,
            grouping=[1],
            aggs=[kit.agg("count", [], BIGINT(False)), kit.agg("sum", [2], INT())],
            window_props=["window_start", "window_end"],
        ),
    ]
    return kit.run(nodes, 3)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("rows_per_batch", [1, 7, 10_000])
def test_sessions_match_row_by_row_model(kit: ModuleType, tmp_path: Path, seed: int, rows_per_batch: int) -> None:
    events = _events(seed, 400)
    path = tmp_path / "e.csv"
    path.write_text("".join(f"{_text(t)},{k},{v}\n" for t, k, v in events))
    want, late = _model(events)
    rows, ex = _run(kit, path, rows_per_batch)
    got = [tuple(r["row"]) for r in rows]
    expect = [(k, str(c), str(s), _text(a), _text(b)) for k, c, s, a, b in want]
    assert sorted(got) == sorted(expect)
    assert ex.metrics[3].late_rows_dropped == late
    # emitted in firing order: by window_end (timer), then window_start
    assert [(r[4], r[3]) for r in got] == sorted((r[4], r[3]) for r in got)
    assert late > 0 and len(want) > 20  # the input exercises lateness and many sessions


def test_restore_from_a_savepoint_continues_exactly(tmp_path: Path) -> None:
    """Open sessions and buffered rows survive a savepoint: the session ids, which are not
    part of the state's contract (rescale rewrites keys and rows only), are rebuilt."""
    from runtime.executor.local import LocalExecutor
    from tests.unit.runtime.checkpoint.test_operator_snapshots import _env, _graph, _inputs, _rows, _SavepointAt

    sql = (
        "SELECT k, window_start, COUNT(*) FROM TABLE(SESSION(TABLE a PARTITION BY k, DESCRIPTOR(ts), "
        "INTERVAL '100' MILLISECOND)) GROUP BY k, window_start, window_end"
    )
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    expected = _rows(list(LocalExecutor(_graph(env, sql)).run()))
    first = _SavepointAt(_graph(env, sql), 10, str(tmp_path / "sp"))
    before = _rows(list(first.run()) + first.flushed)
    assert first.location is not None and 0 < len(before) < len(expected)
    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": str(first.location)}))
    after = _rows(list(rest.run()))
    assert sorted(before + after, key=repr) == sorted(expected, key=repr)


# ---------------------------------------------------------------------- the SESSION window TVF
def _run_tvf(kit: ModuleType, path: Path, rows_per_batch: int) -> tuple[list[dict[str, Any]], Any]:
    """The SESSION window table function alone (session_tvf.py): every kept row with its
    session's window columns."""
    nodes = [
        kit.scan(1, path, kit.EVENTS, rows_per_batch),
        kit.node(
            2,
            "WatermarkAssigner",
            (1,),
            kit.EVENTS,
            rowtime_index=0,
            watermark=kit.minus_interval(0, kit.ts3(), DELAY),
            idle_timeout_ms=None,
        ),
        kit.node(
            3,
            "SessionWindowTableFunction",
            (2,),
            [
                *kit.EVENTS,
                Field("window_start", kit.ts3(False)),
                Field("window_end", kit.ts3(False)),
                Field("window_time", kit.ts3(False)),
            ],
            window=kit.window("SESSION", gap_ms=GAP, partition_keys=[1]),
            time_index=0,
        ),
    ]
    return kit.run(nodes, 3)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("rows_per_batch", [1, 10_000])
def test_session_tvf_rows_match_the_model(kit: ModuleType, tmp_path: Path, seed: int, rows_per_batch: int) -> None:
    """The rows the TVF emits, grouped by (key, window), are the sessions of the row-by-row
    model (count and sum), the same rows are dropped as late, windows come out whole in
    firing order, each window's rows in arrival order, and window_time = window_end - 1 ms."""
    events = _events(seed, 300)
    path = tmp_path / "e.csv"
    path.write_text("".join(f"{_text(t)},{k},{v}\n" for t, k, v in events))
    want, late = _model(events)
    rows, ex = _run_tvf(kit, path, rows_per_batch)
    got = [tuple(r["row"]) for r in rows]
    sessions: dict[tuple[str, str, str], list[int]] = {}
    for ts, k, v, start, end, wtime in got:
        end_ms = (dt.datetime.fromisoformat(end) - BASE) // dt.timedelta(milliseconds=1)
        assert start <= ts < end and wtime == _text(end_ms - 1)
        sessions.setdefault((k, start, end), []).append(int(v))
    assert sorted((k, str(len(vs)), str(sum(vs)), a, b) for (k, a, b), vs in sessions.items()) == sorted(
        (k, str(c), str(s), _text(a), _text(b)) for k, c, s, a, b in want
    )
    assert ex.metrics[3].late_rows_dropped == late
    order = [(r[4], r[3]) for r in got]  # (window_end, window_start) in output order: the timers'
    assert order == sorted(order)
    runs = [
        k
        for i, k in enumerate((r[1], r[3], r[4]) for r in got)
        if i == 0 or k != (got[i - 1][1], got[i - 1][3], got[i - 1][4])
    ]
    assert len(runs) == len(sessions)  # each window's rows come out together
    # within a window, the input's order (arrival): the rows' positions in `events`
    arrival = {(_text(t), k, str(v)): i for i, (t, k, v) in reversed(list(enumerate(events)))}
    for key in sessions:
        pos = [arrival[(r[0], r[1], r[2])] for r in got if (r[1], r[3], r[4]) == key]
        assert pos == sorted(pos)


def test_session_tvf_restores_from_a_savepoint(tmp_path: Path) -> None:
    """Buffered rows of open sessions survive a savepoint (generic state, as the SESSION
    window aggregate's)."""
    from runtime.executor.local import LocalExecutor
    from tests.unit.runtime.checkpoint.test_operator_snapshots import _env, _graph, _inputs, _rows, _SavepointAt

    sql = (
        "SELECT k, v, ts, window_start, window_end FROM TABLE("
        "SESSION(TABLE a PARTITION BY k, DESCRIPTOR(ts), INTERVAL '100' MILLISECOND))"
    )
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    expected = _rows(list(LocalExecutor(_graph(env, sql)).run()))
    first = _SavepointAt(_graph(env, sql), 10, str(tmp_path / "sp"))
    before = _rows(list(first.run()) + first.flushed)
    assert first.location is not None and 0 < len(before) < len(expected)
    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": str(first.location)}))
    after = _rows(list(rest.run()))
    assert sorted(before + after, key=repr) == sorted(expected, key=repr)


def test_restore_of_sessions_without_buffered_rows_then_rows_arrive(tmp_path: Path) -> None:
    """A savepoint taken while no row was buffered (here: all rows so far filtered out; a
    rescaled subtask that owns no open session is the same) restores into a state whose
    buffered-row lists stay aligned, so the rows after the restore fire normally."""
    from runtime.executor.local import LocalExecutor
    from tests.unit.runtime.checkpoint.test_operator_snapshots import BASE as T0
    from tests.unit.runtime.checkpoint.test_operator_snapshots import _env, _graph, _inputs, _rows, _SavepointAt

    sql = (
        "SELECT k, window_start, COUNT(*) FROM TABLE(SESSION(TABLE (SELECT * FROM a WHERE ts_ms > "
        f"{T0 + 400 * 37}) PARTITION BY k, DESCRIPTOR(ts), INTERVAL '100' MILLISECOND)) "
        "GROUP BY k, window_start, window_end"
    )
    _inputs(tmp_path)
    env = _env(tmp_path, "hashmap")
    expected = _rows(list(LocalExecutor(_graph(env, sql)).run()))
    assert expected
    first = _SavepointAt(_graph(env, sql), 2, str(tmp_path / "sp"))
    before = _rows(list(first.run()) + first.flushed)
    assert first.location is not None and before == []
    rest = LocalExecutor(_graph(env, sql, **{"execution.savepoint.path": str(first.location)}))
    assert sorted(_rows(list(rest.run())), key=repr) == sorted(expected, key=repr)
