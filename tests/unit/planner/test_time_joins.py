"""Planning of time-bounded joins: which operator a join becomes, its parameters, the
refusals Flink makes, and a golden EXPLAIN of an event-time temporal join (streaming only:
batch refuses it, so it cannot live with the two-mode golden files in tests/plans)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError, UnsupportedSqlError
from planner.parse import parse_script
from planner.physical import PhysicalNode
from planner.statements import CreateTable, CreateView, Explain, Query

GOLDEN = Path(__file__).parent / "golden"

DDL = """
CREATE TABLE a (k INT, v INT, ts TIMESTAMP(3), pt AS PROCTIME(), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');
CREATE TABLE b (k INT, w INT, ts TIMESTAMP(3), PRIMARY KEY (k) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');
CREATE TABLE nopk (k INT, w INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
  WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');
CREATE TABLE p (k INT, x INT, pt AS PROCTIME())
  WITH ('connector' = 'filesystem', 'path' = 'p.csv', 'format' = 'csv');
"""


def _plan(sql: str, mode: str = "streaming") -> PhysicalNode:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": mode})
    for st in parse_script(DDL + sql):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, CreateView):
            catalog.create_view(st, mode.upper())
        elif isinstance(st, Query):
            return planner.optimize(planner.bind(st), st.sql)
    raise AssertionError("no query")


def _find(n: PhysicalNode, op: str) -> PhysicalNode:
    if n.operator == op:
        return n
    for i in n.inputs:
        try:
            return _find(i, op)
        except LookupError:
            continue
    raise LookupError(op)


@pytest.mark.parametrize(
    ("cond", "lower", "upper"),
    [
        ("b.ts BETWEEN a.ts - INTERVAL '5' SECOND AND a.ts", -5000, 0),
        ("b.ts > a.ts - INTERVAL '5' SECOND AND b.ts < a.ts + INTERVAL '5' SECOND", -4999, 4999),
        ("a.ts >= b.ts AND a.ts <= b.ts + INTERVAL '2' SECOND", -2000, 0),
        ("a.ts = b.ts", 0, 0),  # Flink's `ltime = rtime`
        ("b.ts = a.ts + INTERVAL '1' SECOND", 1000, 1000),
    ],
)
def test_interval_bounds(cond: str, lower: int, upper: int) -> None:
    plan = _plan(f"SELECT a.v, b.w FROM a JOIN b ON a.k = b.k AND {cond}")
    j = _find(plan, "IntervalJoin")
    assert (j.params.lower_ms, j.params.upper_ms) == (lower, upper)
    assert j.params.left_keys == (0,) and j.params.right_keys == (0,)
    assert j.changelog_mode == "I"


def test_one_sided_time_bound_is_not_an_interval_join() -> None:
    from planner.logical import LogicalJoin
    from planner.rules.time_joins import conjuncts, interval_bounds

    catalog = Catalog()
    planner = Planner(catalog, {})
    for st in parse_script(DDL + "SELECT * FROM a JOIN b ON a.k = b.k AND b.ts > a.ts"):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Query):
            plan = planner.bind(st)
    join = plan.input if not isinstance(plan, LogicalJoin) else plan  # type: ignore[attr-defined]
    while not isinstance(join, LogicalJoin):
        join = join.inputs[0]
    bounds, rest = interval_bounds(conjuncts(join.condition), len(join.left.fields))
    assert bounds is None and len(rest) == 2


def test_window_join_params() -> None:
    plan = _plan(
        "SELECT L.k, L.v, R.w FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L "
        "LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R "
        "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k = R.k AND L.v < R.w"
    )
    j = _find(plan, "WindowJoin")
    assert j.params.kind == "LEFT"
    assert j.params.left_keys == (0,) and j.params.right_keys == (0,)
    assert j.params.condition is not None and j.params.window.size_ms == 5000


def test_interval_join_keys_on_computed_expressions() -> None:
    """`MOD(a.v, 3) = b.k + 1`: each side's expression is a column appended by a Calc below
    it (a.pt, b.ts stay at their places), the join keyed on them, the rest a residual."""
    plan = _plan(
        "SELECT a.v, b.w FROM a LEFT JOIN b ON MOD(a.v, 3) = b.k + 1 AND a.k <> b.w "
        "AND b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts"
    )
    j = _find(plan, "IntervalJoin")
    p = j.params
    assert [f.name for f in j.inputs[0].fields] == ["k", "v", "ts", "$f3"]
    assert (p.left_keys, p.right_keys, p.left_time, p.right_time, p.left_width) == ((3,), (3,), 2, 2, 4)
    assert p.condition is not None
    for side in j.inputs:
        assert side.operator == "Exchange" and side.inputs[0].operator == "Calc"


def test_null_safe_equality_is_no_interval_join_key() -> None:
    plan = _plan(
        "SELECT a.v, b.w FROM a JOIN b ON a.k IS NOT DISTINCT FROM b.k AND b.ts BETWEEN a.ts - INTERVAL '1' SECOND AND a.ts"
    )
    p = _find(plan, "IntervalJoin").params
    assert p.left_keys == () and p.condition is not None


def test_window_join_keys_on_a_computed_expression() -> None:
    plan = _plan(
        "SELECT L.k, R.w FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L "
        "JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '5' SECOND))) R "
        "ON L.window_start = R.window_start AND L.window_end = R.window_end AND L.k + 1 = R.k"
    )
    j = _find(plan, "WindowJoin")
    nl = len(j.inputs[0].fields)
    assert j.params.left_keys == (nl - 1,) and j.params.right_keys == (0,) and j.params.left_width == nl
    assert j.params.condition is None


def test_different_windows_are_refused() -> None:
    with pytest.raises(SqlError, match="window join doesn't support different window"):
        _plan(
            "SELECT L.k FROM (SELECT * FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '5' SECOND))) L "
            "JOIN (SELECT * FROM TABLE(TUMBLE(TABLE b, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R "
            "ON L.window_start = R.window_start AND L.window_end = R.window_end"
        )


def test_temporal_join_params_and_refusals() -> None:
    j = _find(_plan("SELECT a.v, b.w FROM a JOIN b FOR SYSTEM_TIME AS OF a.ts ON a.k = b.k"), "TemporalJoin")
    assert j.params.left_keys == (0,) and j.params.right_keys == (0,)
    assert j.params.left_time == 2 and j.params.right_time == 2
    with pytest.raises(SqlError, match="BATCH"):
        _plan("SELECT a.v FROM a JOIN b FOR SYSTEM_TIME AS OF a.ts ON a.k = b.k", "batch")
    with pytest.raises(SqlError, match="requires primary key"):
        _plan("SELECT a.v FROM a JOIN nopk FOR SYSTEM_TIME AS OF a.ts ON a.k = nopk.k")
    with pytest.raises(SqlError, match="primary key \\[k\\] must be included"):
        _plan("SELECT a.v FROM a JOIN b FOR SYSTEM_TIME AS OF a.ts ON a.v = b.w")
    with pytest.raises(SqlError, match="only supports INNER JOIN and LEFT JOIN"):
        _plan("SELECT a.v FROM a RIGHT JOIN b FOR SYSTEM_TIME AS OF a.ts ON a.k = b.k")
    with pytest.raises(SqlError, match="Processing-time temporal join is not supported yet"):
        _plan("SELECT a.v FROM a JOIN b FOR SYSTEM_TIME AS OF a.pt ON a.k = b.k")
    with pytest.raises(SqlError, match="left table's time attribute"):
        _plan("SELECT a.v FROM a JOIN b FOR SYSTEM_TIME AS OF a.v ON a.k = b.k")


@pytest.mark.parametrize("name", ["time_joins_temporal", "time_joins_proctime_interval"])
def test_streaming_only_golden(name: str) -> None:
    """Event-time temporal join; processing-time interval join (isRowTime=false, insert-only)."""
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming"})
    text = None
    for st in parse_script((GOLDEN / f"{name}.sql").read_text()):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Explain):
            text = planner.explain(st)
    assert text is not None
    golden = GOLDEN / f"{name}.streaming.txt"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        golden.write_text(text)
    assert text == golden.read_text()


def test_time_travel_outside_a_join_is_refused_with_a_hint() -> None:
    """`FROM t FOR SYSTEM_TIME AS OF TIMESTAMP '...'` asks the catalog for an old version of
    the table (Flink's time travel); no catalog here keeps versions, so the query is refused
    rather than reading the current table."""
    with pytest.raises(UnsupportedSqlError, match="Time travel is not supported") as e:
        _plan("SELECT v FROM a FOR SYSTEM_TIME AS OF TIMESTAMP '2023-07-31 00:00:00'", "batch")
    assert e.value.hint is not None and "temporal join" in e.value.hint
    assert e.value.line == 1


@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN", "FULL JOIN"])
def test_proctime_interval_join(kind: str) -> None:
    """Bounds on both sides' PROCTIME attributes: an IntervalJoin in processing time,
    insert-only even when outer (a regular join would be updating)."""
    plan = _plan(f"SELECT p.x, a.v FROM p {kind} a ON p.k = a.k AND p.pt BETWEEN a.pt - INTERVAL '4' HOUR AND a.pt")
    j = _find(plan, "IntervalJoin")
    assert j.params.proctime
    assert (j.params.lower_ms, j.params.upper_ms) == (0, 4 * 3600_000)  # d = a.pt - p.pt
    assert plan.changelog_mode == "I"


def test_proctime_equality_is_an_interval_join() -> None:
    j = _find(_plan("SELECT p.x, a.v FROM p LEFT JOIN a ON p.k = a.k AND p.pt = a.pt"), "IntervalJoin")
    assert j.params.proctime and (j.params.lower_ms, j.params.upper_ms) == (0, 0)
    assert j.params.left_keys == (0,) and j.params.right_keys == (0,)


def test_rowtime_interval_join_is_not_proctime() -> None:
    j = _find(_plan("SELECT a.v, b.w FROM a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts AND a.ts"), "IntervalJoin")
    assert not j.params.proctime


def test_proctime_interval_join_is_a_regular_join_in_batch() -> None:
    """Flink's batch planner has no interval join: the bounds are a join condition."""
    plan = _plan(
        "SELECT p.x, a.v FROM p JOIN a ON p.k = a.k AND p.pt BETWEEN a.pt - INTERVAL '4' HOUR AND a.pt", "batch"
    )
    with pytest.raises(LookupError):
        _find(plan, "IntervalJoin")


def test_rowtime_bounded_by_proctime_is_no_interval_join() -> None:
    """A rowtime compared with a proctime is no time bound (Flink's IntervalJoinUtil): a
    regular join with the comparisons as its condition."""
    plan = _plan("SELECT p.x, b.w FROM p JOIN b ON p.k = b.k AND p.pt BETWEEN b.ts - INTERVAL '4' HOUR AND b.ts")
    with pytest.raises(LookupError):
        _find(plan, "IntervalJoin")
    assert _find(plan, "Join").params.condition is not None


def test_proctime_interval_join_materializes_rowtime_attributes_of_its_inputs() -> None:
    """Flink refuses rowtime attributes in a processing-time interval join's row (it forwards
    watermarks without holding them back) after dropping unused columns; this planner keeps
    a watermarked side's rowtime column, so the join passes it on as a plain timestamp."""
    plan = _plan("SELECT * FROM a JOIN p ON a.k = p.k AND a.pt BETWEEN p.pt - INTERVAL '1' HOUR AND p.pt")
    j = _find(plan, "IntervalJoin")
    assert j.params.proctime
    ts = [f for f in j.fields if f.name == "ts"]
    assert ts and ts[0].type.time_attr is None and ts[0].type.name == "TIMESTAMP"
    assert [f.type.time_attr for f in j.fields if f.name.startswith("pt")] == ["PROCTIME", "PROCTIME"]
