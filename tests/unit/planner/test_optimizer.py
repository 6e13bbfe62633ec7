"""Optimizer phases, physical plan, changelog modes and lowering to a JobGraph."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError, SqlValidationError
from planner.logical import LogicalCalc, LogicalTableScan, LogicalWindowAggregate, walk
from planner.optimizer import optimize_logical
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Explain, InsertInto, Query
from runtime.expr.ir import Call, InputRef
from runtime.graph import JobGraph
from runtime.operators.union import ExchangeParams
from runtime.plan_params import WindowParams
from runtime.types import Field

DDL = """
CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv', 'scan.watermark.idle-timeout' = '5 s');
CREATE TABLE snk (k STRING, total BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE fs_snk (k STRING, total BIGINT) WITH ('connector' = 'filesystem', 'path' = 'out', 'format' = 'csv');
"""


def setup(mode: str = "streaming", config: dict[str, str] | None = None) -> Planner:
    cat = Catalog()
    for st in parse_script(DDL):
        if isinstance(st, CreateTable):
            cat.create_table(st)
        elif isinstance(st, CreateView):
            cat.create_view(st)
    return Planner(cat, {"execution.runtime-mode": mode, **(config or {})})


def query(sql: str) -> Query:
    (st,) = parse_script(sql)
    assert isinstance(st, Query)
    return st


def plan(sql: str, mode: str = "streaming", config: dict[str, str] | None = None):
    return setup(mode, config).plan_query(query(sql))


def ops(pq) -> list[str]:
    return [n.operator for n in pq.graph.nodes]


def node(pq, operator: str):
    return next(n for n in pq.graph.nodes if n.operator == operator)


def test_filter_projection_single_calc_and_projection_pushdown() -> None:
    pq = plan("SELECT k, v + 1 AS w FROM t WHERE v > 2")
    assert ops(pq) == ["TableSourceScan", "WatermarkAssigner", "Calc"]
    scan = node(pq, "TableSourceScan")
    assert scan.params.projection == (0, 1, 2)  # s (index 3) is not read
    assert [f.name for f in scan.schema] == ["ts", "k", "v"]
    assert [f.name for f in scan.params.physical_schema] == ["ts", "k", "v", "s"]
    assert scan.params.bounded is True and scan.params.connector == "filesystem"
    wm = node(pq, "WatermarkAssigner")
    assert wm.params.rowtime_index == 0 and wm.params.idle_timeout_ms == 5000
    calc = node(pq, "Calc")
    assert calc.params.condition.name == "greater_than"
    assert [str(e) for e in calc.params.projections] == ["$1", "plus($2, 1)"]
    assert [f.name for f in pq.schema] == ["k", "w"]


def test_batch_mode_has_no_watermark_assigner() -> None:
    pq = plan("SELECT k FROM t", "batch")
    assert ops(pq) == ["TableSourceScan", "Calc"]
    assert node(pq, "TableSourceScan").params.projection == (1,)
    assert pq.graph.mode == "BATCH"


def test_group_aggregate_exchange_and_changelog() -> None:
    pq = plan("SELECT k, MAX(v) AS max_v FROM t GROUP BY k")
    assert ops(pq) == ["TableSourceScan", "WatermarkAssigner", "Calc", "Exchange", "GroupAggregate"]
    ex = node(pq, "Exchange")
    assert ex.params == ExchangeParams("hash", (0,))
    agg = node(pq, "GroupAggregate")
    assert agg.params.grouping == (0,)
    (a,) = agg.params.aggs
    assert a.name == "max" and a.args == (1,) and a.distinct is False and a.filter is None
    assert agg.changelog_mode == "I,UB,UA" and pq.changelog_mode == "I,UB,UA"
    assert plan("SELECT k, MAX(v) FROM t GROUP BY k", "batch").changelog_mode == "I"


def test_global_aggregate_single_exchange_and_distinct_insert_only() -> None:
    pq = plan("SELECT COUNT(*) AS n FROM t")
    assert node(pq, "Exchange").params.distribution == "single"
    assert pq.changelog_mode == "I,UB,UA"
    d = plan("SELECT DISTINCT k FROM t")
    assert d.changelog_mode == "I" and node(d, "GroupAggregate").params.aggs == ()


def test_window_tvf_aggregate_is_fused() -> None:
    pq = plan(
        "SELECT window_start, window_end, k, COUNT(*) AS cnt, SUM(v) AS s FROM "
        "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k"
    )
    assert "WindowTableFunction" not in ops(pq)
    w = node(pq, "WindowAggregate")
    assert w.params.window == WindowParams("TUMBLE", size_ms=10000)
    assert w.params.window_props == ("window_start", "window_end")
    inp = pq.graph.node(w.inputs[0])
    assert inp.operator == "Exchange" and inp.params.keys == w.params.grouping
    assert inp.schema[w.params.time_index].name == "ts"
    assert [f.name for f in w.schema] == ["k", "cnt", "s", "window_start", "window_end"]
    assert [f.name for f in pq.schema] == ["window_start", "window_end", "k", "cnt", "s"]
    assert w.changelog_mode == "I"


def test_window_tvf_without_aggregate_stays_a_table_function() -> None:
    pq = plan("SELECT k, window_start FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))")
    assert "WindowTableFunction" in ops(pq)
    wtf = node(pq, "WindowTableFunction")
    assert wtf.params.window.kind == "TUMBLE"
    assert [f.name for f in wtf.schema][-3:] == ["window_start", "window_end", "window_time"]


def test_hop_size_multiple_checked_in_streaming_only() -> None:
    sql = (
        "SELECT window_start, COUNT(*) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '3' SECOND, "
        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end"
    )
    with pytest.raises(SqlValidationError, match="integral multiple of slide"):
        plan(sql)
    assert node(plan(sql, "batch"), "WindowAggregate").params.window.slide_ms == 3000


def test_legacy_window_lowers_to_window_aggregate() -> None:
    pq = plan(
        "SELECT k, TUMBLE_END(ts, INTERVAL '10' SECOND) AS we, SUM(v) AS s FROM t "
        "GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), k HAVING SUM(v) > 2"
    )
    w = node(pq, "WindowAggregate")
    assert w.params.window_props == ("window_start", "window_end", "window_time")
    top = pq.graph.nodes[-1]
    assert top.operator == "Calc" and top.params.condition is not None


def test_rules_can_be_switched_off() -> None:
    sql = (
        "SELECT window_start, window_end, COUNT(*) AS c FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end"
    )
    pq = plan(sql, config={"streamsql.optimizer.disabled-rules": "fuse_window_aggregate"})
    assert "WindowAggregate" not in ops(pq) and "GroupAggregate" in ops(pq)


def test_logical_phases_directly() -> None:
    p = setup()
    logical = p.bind(query("SELECT v FROM t WHERE k = 'a'"))
    opt = optimize_logical(logical)
    scans = [n for n in walk(opt) if isinstance(n, LogicalTableScan)]
    assert scans[0].projection == (0, 1, 2)
    assert isinstance(opt, LogicalCalc) and opt.condition is not None
    assert not any(isinstance(n, LogicalWindowAggregate) for n in walk(opt))


def test_union_and_values() -> None:
    pq = plan("SELECT k FROM t UNION ALL SELECT 'x'")
    assert "Union" in ops(pq) and "Values" in ops(pq)
    values = node(pq, "Values")
    assert [[lit.value for lit in r] for r in values.params.rows] == [[0]]
    assert node(pq, "Union").schema[0].name == "k"
    v = plan("SELECT * FROM (VALUES (1, 'a'), (2, 'bb')) AS x(n, s)")
    vals = node(v, "Values")
    assert [[lit.value for lit in r] for r in vals.params.rows] == [[1, "a"], [2, "bb"]]


def test_jobgraph_json_round_trip() -> None:
    pq = plan("SELECT k, COUNT(*) AS n FROM t WHERE v > 1 GROUP BY k")
    text = pq.graph.to_json()
    again = JobGraph.from_json(text)
    assert again.to_json() == text
    agg = next(n for n in again.nodes if n.operator == "GroupAggregate")
    assert agg.params.aggs[0].type.name == "BIGINT"
    assert pq.graph.result_node == pq.graph.nodes[-1].id


def test_insert_into_sink_with_implicit_cast() -> None:
    p = setup()
    (ins,) = parse_script("INSERT INTO snk SELECT k, v FROM t")
    assert isinstance(ins, InsertInto)
    g = p.plan_inserts([ins])
    sink = g.nodes[-1]
    assert sink.operator == "Sink" and g.result_node is None
    assert sink.params.table == "default_catalog.default_database.snk"
    assert sink.params.connector == "blackhole"
    assert list(sink.params.schema) == [
        Field("k", sink.params.schema[0].type),
        Field("total", sink.params.schema[1].type),
    ]
    calc = g.node(sink.inputs[0])
    cast = calc.params.projections[1]
    assert isinstance(cast, Call) and cast.name == "cast" and str(cast.type) == "BIGINT"
    assert isinstance(calc.params.projections[0], InputRef)


def test_insert_errors() -> None:
    p = setup()
    (bad,) = parse_script("INSERT INTO snk SELECT k FROM t")
    with pytest.raises(SqlValidationError, match="Different number of columns"):
        p.plan_inserts([bad])
    (upd,) = parse_script("INSERT INTO fs_snk SELECT k, COUNT(*) FROM t GROUP BY k")
    with pytest.raises(SqlError, match="doesn't support consuming update changes"):
        p.plan_inserts([upd])


def test_explain_changelog_mode() -> None:
    p = setup()
    q = query("SELECT k, MAX(v) AS m FROM t GROUP BY k")
    text = p.explain(Explain(statement=q, details=("CHANGELOG_MODE",), sql=q.sql))
    assert text.startswith(
        "== Abstract Syntax Tree ==\nLogicalProject(k=[$0], m=[$1])\n+- LogicalAggregate(group=[{0}], m=[MAX($1)])"
    )
    assert "GroupAggregate(groupBy=[k], select=[k, MAX(v) AS m], changelogMode=[I,UA])" in text
    assert "Exchange(distribution=[hash[k]], changelogMode=[I])" in text
    plain = p.explain(Explain(statement=q, sql=q.sql))
    assert "changelogMode" not in plain


def test_select_without_from_reads_one_row_values() -> None:
    pq = plan("SELECT 1 AS one, 'x' AS s")
    assert ops(pq) == ["Values", "Calc"]
    assert [[lit.value for lit in r] for r in node(pq, "Values").params.rows] == [[0]]
    assert [f.name for f in pq.schema] == ["one", "s"]


def test_insert_with_column_list_fills_nulls_and_statement_set_explain() -> None:
    p = setup()
    cat_sql = "CREATE TABLE wide (k STRING, total BIGINT, extra INT) WITH ('connector' = 'blackhole');"
    p.catalog.create_table(parse_script(cat_sql)[0])
    (ins,) = parse_script("INSERT INTO wide (total, k) SELECT v, k FROM t")
    g = p.plan_inserts([ins])
    calc = g.node(g.nodes[-1].inputs[0])
    projections = calc.params.projections
    assert [type(e).__name__ for e in projections] == ["InputRef", "Call", "Literal"]
    assert projections[2].value is None and str(projections[2].type) == "INT"
    (ss,) = parse_script(
        "EXPLAIN STATEMENT SET BEGIN INSERT INTO snk SELECT k, v FROM t; INSERT INTO wide (k) SELECT s FROM t; END"
    )
    text = p.explain(ss)
    # Two sinks in the physical plan and two in the execution plan.
    assert text.count("LogicalSink(") == 2 and text.count("\nSink(") == 4


def test_validate_returns_schema() -> None:
    p = setup()
    assert [f.name for f in p.validate(query("SELECT k, v FROM t"))] == ["k", "v"]
    with pytest.raises(SqlValidationError):
        p.validate(query("SELECT nope FROM t"))
