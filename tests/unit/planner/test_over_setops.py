"""OVER windows and set operations: binding, window groups, Flink's streaming checks."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.binder import bind_query
from planner.catalog import Catalog
from planner.errors import SqlError, SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalUnion, walk
from planner.parse import parse_script
from planner.rules.over import LogicalOverAggregate
from planner.rules.setops import LogicalSetOp
from planner.statements import CreateTable, Query

DDL = """
CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE a (s STRING, n INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');
CREATE TABLE b (s STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');
"""


def _catalog() -> Catalog:
    cat = Catalog()
    for st in parse_script(DDL):
        if isinstance(st, CreateTable):
            cat.create_table(st)
    return cat


def bind(sql: str, mode: str = "STREAMING"):
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    return bind_query(st.query, _catalog(), st.sql, mode)


def plan(sql: str, mode: str = "streaming"):
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    return Planner(_catalog(), {"execution.runtime-mode": mode}).plan_query(st)


def _over(node) -> LogicalOverAggregate:
    return next(n for n in walk(node) if isinstance(n, LogicalOverAggregate))


def test_named_window_groups_calls_into_one_group() -> None:
    p = bind(
        "SELECT k, SUM(v) OVER w AS s, COUNT(*) OVER w AS c, SUM(v) OVER w AS s2 FROM t "
        "WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)"
    )
    over = _over(p)
    assert len(over.groups) == 1
    g = over.groups[0]
    assert [c.name for c in g.calls] == ["sum", "count"]  # identical calls are shared
    assert (g.frame.kind, g.frame.lower, g.frame.upper) == ("ROWS", -2, 0)
    assert [f.name for f in p.fields] == ["k", "s", "c", "s2"]
    assert str(p.fields[2].type) == "BIGINT NOT NULL"


def test_range_interval_default_frame_and_lag() -> None:
    p = bind(
        "SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '5' SECOND PRECEDING AND CURRENT ROW),"
        " LAG(v, 2, -1) OVER (PARTITION BY k ORDER BY ts) FROM t"
    )
    over = _over(p)
    assert len(over.groups) == 2
    assert (over.groups[0].frame.kind, over.groups[0].frame.lower) == ("RANGE", -5000)
    assert (over.groups[1].frame.kind, over.groups[1].frame.lower, over.groups[1].frame.upper) == ("RANGE", None, 0)
    lag = over.groups[1].calls[0]
    assert dict(lag.params)["offset"] == 2 and dict(lag.params)["default"].value == -1
    assert [f.name for f in p.fields] == ["EXPR$0", "EXPR$1"]


def test_star_does_not_expand_to_over_columns() -> None:
    p = bind("SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM t")
    assert [f.name for f in p.fields] == ["ts", "k", "v", "rn"]


def test_unknown_named_window() -> None:
    with pytest.raises(SqlValidationError, match="Window 'x' not found"):
        bind("SELECT SUM(v) OVER x FROM t")


def test_streaming_rejects_two_windows_and_lead() -> None:
    with pytest.raises(UnsupportedSqlError, match="same window"):
        plan(
            "SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts), SUM(v) OVER (ORDER BY ts ROWS BETWEEN 1 PRECEDING AND "
            "CURRENT ROW) FROM t"
        )
    with pytest.raises(UnsupportedSqlError, match="LEAD Function is not supported in stream mode"):
        plan("SELECT LEAD(v) OVER (PARTITION BY k ORDER BY ts) FROM t")
    # batch accepts both: one OverAggregate per window group
    graph = plan("SELECT SUM(v) OVER (PARTITION BY k ORDER BY ts), LEAD(v) OVER (ORDER BY ts) FROM t", "batch").graph
    assert [n.operator for n in graph.nodes].count("OverAggregate") == 2


def test_streaming_over_is_insert_only_on_rowtime() -> None:
    pq = plan("SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t")
    over = next(n for n in pq.graph.nodes if n.operator == "OverAggregate")
    assert over.changelog_mode == "I" and over.params.time_kind == "ROWTIME"
    assert not over.params.updating


def test_non_time_order_is_recompute_mode_beyond_flink() -> None:
    pq = plan("SELECT s, SUM(n) OVER (PARTITION BY s ORDER BY n) FROM a")
    over = next(n for n in pq.graph.nodes if n.operator == "OverAggregate")
    assert over.params.updating and over.changelog_mode == "I,UB,UA,D"


def test_set_operations_bind_with_widening_and_precedence() -> None:
    p = bind("SELECT s, n FROM a UNION SELECT s, n FROM b INTERSECT SELECT s, n FROM b")
    assert isinstance(p, LogicalSetOp) and p.kind == "UNION" and not p.all
    assert isinstance(p.children[1], LogicalSetOp) and p.children[1].kind == "INTERSECT"
    assert str(p.fields[1].type) == "BIGINT"
    e = bind("SELECT s, n FROM a EXCEPT ALL SELECT s, n FROM b")
    assert isinstance(e, LogicalSetOp) and e.kind == "EXCEPT" and e.all
    assert isinstance(bind("SELECT s, n FROM a UNION ALL SELECT s, n FROM b"), LogicalUnion)


def test_set_operation_column_count_mismatch() -> None:
    with pytest.raises(SqlError, match="Column count mismatch in EXCEPT"):
        bind("SELECT s FROM a EXCEPT SELECT s, n FROM b")


def test_set_operation_plans() -> None:
    ops = [n.operator for n in plan("SELECT s, n FROM a INTERSECT ALL SELECT s, n FROM b").graph.nodes]
    assert "ReplicateRows" in ops and "GroupAggregate" in ops
    union = plan("SELECT s, n FROM a UNION SELECT s, n FROM b")
    assert union.changelog_mode == "I"
