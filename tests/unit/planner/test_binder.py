"""Binder: names, types, literals, syntax → canonical calls, aggregates, windows, errors."""

from __future__ import annotations

import pytest

from planner.binder import bind_query
from planner.catalog import Catalog
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import (
    LogicalAggregate,
    LogicalProject,
    LogicalValues,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    walk,
)
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Query
from runtime.expr.ir import InputRef, Literal

DDL = """
CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  d DECIMAL(10, 2),
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');
CREATE TABLE u (k STRING, w INT) WITH ('connector' = 'filesystem', 'path' = 'u.csv', 'format' = 'csv');
CREATE TABLE p (ts TIMESTAMP(3), k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 'p.csv', 'format' = 'csv');
"""


def make_catalog(extra: str = "") -> Catalog:
    cat = Catalog()
    for st in parse_script(DDL + extra):
        if isinstance(st, CreateTable):
            cat.create_table(st)
        elif isinstance(st, CreateView):
            cat.create_view(st)
    return cat


def bind(sql: str, mode: str = "STREAMING", extra: str = ""):
    cat = make_catalog(extra)
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    return bind_query(st.query, cat, st.sql, mode)


def schema(sql: str, mode: str = "STREAMING") -> list[tuple[str, str]]:
    return [(f.name, str(f.type)) for f in bind(sql, mode).fields]


def top_exprs(sql: str):
    plan = bind(sql)
    assert isinstance(plan, LogicalProject)
    return plan.exprs


# ---------------------------------------------------------------------- names
def test_projection_names_types_and_expr_naming() -> None:
    assert schema("SELECT k, v + 1, v * 2 AS w, t.d FROM t") == [
        ("k", "STRING"),
        ("EXPR$1", "INT"),
        ("w", "INT"),
        ("d", "DECIMAL(10, 2)"),
    ]


def test_star_and_qualified_star_and_duplicate_names() -> None:
    assert [n for n, _ in schema("SELECT * FROM t")] == ["ts", "k", "v", "d"]
    assert [n for n, _ in schema("SELECT x.*, k FROM t AS x")] == ["ts", "k", "v", "d", "k0"]


def test_rowtime_kept_by_plain_reference_lost_by_expression() -> None:
    out = dict(schema("SELECT ts, ts + INTERVAL '1' SECOND AS ts2 FROM t"))
    assert out["ts"] == "TIMESTAMP(3) *ROWTIME*"
    assert "ROWTIME" not in out["ts2"]


def test_time_attribute_propagates_through_views() -> None:
    plan = bind(
        "SELECT * FROM v1",
        extra="CREATE VIEW v1 AS SELECT ts, v FROM t WHERE v > 1;",
    )
    assert str(plan.fields[0].type) == "TIMESTAMP(3) *ROWTIME*"


# ---------------------------------------------------------------------- literals
def test_literal_types() -> None:
    e = top_exprs("SELECT 1, 3000000000, 1.5, 1.5E0, 'abc', TRUE, INTERVAL '10' SECOND, INTERVAL '2' MONTH FROM t")
    assert [str(x.type) for x in e] == [
        "INT NOT NULL",
        "BIGINT NOT NULL",
        "DECIMAL(2, 1) NOT NULL",
        "DOUBLE NOT NULL",
        "CHAR(3) NOT NULL",
        "BOOLEAN NOT NULL",
        "INTERVAL SECOND(3) NOT NULL",
        "INTERVAL MONTH NOT NULL",
    ]
    assert e[2].value == "1.5" and e[6].value == 10000 and e[7].value == 2


def test_negative_literal_is_folded() -> None:
    (e,) = top_exprs("SELECT -7 FROM t")
    assert isinstance(e, Literal) and e.value == -7


# ---------------------------------------------------------------------- syntax → calls
def test_between_in_not_in_distinct() -> None:
    b, i, ni, nd = top_exprs("SELECT v BETWEEN 1 AND 5, v IN (1, 2), v NOT IN (3), v IS NOT DISTINCT FROM 2 FROM t")
    assert b.name == "and" and [a.name for a in b.args] == ["greater_than_or_equal", "less_than_or_equal"]
    assert i.name == "in" and len(i.args) == 3
    assert ni.name == "not" and ni.args[0].name == "in"
    assert nd.name == "is_not_distinct_from"


def test_simple_case_becomes_searched_with_typed_null_else() -> None:
    (c,) = top_exprs("SELECT CASE v WHEN 1 THEN 'one' WHEN 2 THEN 'two' END FROM t")
    assert c.name == "case"
    assert c.args[0].name == "equals" and c.args[2].name == "equals"
    assert isinstance(c.args[-1], Literal) and c.args[-1].value is None and c.args[-1].type.name != "NULL"


def test_is_predicates_and_cast() -> None:
    a, b, c, d = top_exprs("SELECT v IS NULL, (v > 1) IS NOT TRUE, (v > 1) IS UNKNOWN, CAST(v AS BIGINT) FROM t")
    assert (a.name, b.name, c.name) == ("is_null", "is_not_true", "is_null")
    assert d.name == "cast" and str(d.type) == "BIGINT"


def test_cast_null_is_typed_literal() -> None:
    (e,) = top_exprs("SELECT CAST(NULL AS INT) FROM t")
    assert isinstance(e, Literal) and e.value is None and str(e.type) == "INT"


# ---------------------------------------------------------------------- VALUES
def test_values_common_types_and_aliases() -> None:
    plan = bind("SELECT * FROM (VALUES ('a', 1, 1.5), ('bb', CAST(NULL AS INT), -7), ('ccc', 2, 0.1)) AS v(name, x, y)")
    vals = [n for n in walk(plan) if isinstance(n, LogicalValues)][0]
    assert [(f.name, str(f.type)) for f in vals.fields] == [
        ("name", "VARCHAR(3) NOT NULL"),
        ("x", "INT"),
        ("y", "DECIMAL(11, 1) NOT NULL"),
    ]
    assert vals.rows[1][2].value == "-7.0"


def test_values_bare_null_rejected() -> None:
    with pytest.raises(SqlValidationError, match="Illegal use of 'NULL'"):
        bind("SELECT * FROM (VALUES (1, NULL)) AS v(a, b)")


# ---------------------------------------------------------------------- aggregates
def test_group_by_aggregates_distinct_filter() -> None:
    plan = bind("SELECT k, COUNT(*) AS n, COUNT(DISTINCT v) FILTER (WHERE v > 0) AS c, SUM(v) AS s FROM t GROUP BY k")
    agg = [n for n in walk(plan) if isinstance(n, LogicalAggregate)][0]
    assert agg.grouping == (0,)
    names = [(a.name, a.distinct, a.filter is not None) for a in agg.aggs]
    assert names == [("count", False, False), ("count", True, True), ("sum", False, False)]
    assert [f.name for f in plan.fields] == ["k", "n", "c", "s"]
    assert str(plan.fields[1].type) == "BIGINT NOT NULL"


def test_group_by_expression_and_having() -> None:
    out = schema("SELECT MOD(v, 3) AS m, COUNT(*) AS n FROM t GROUP BY MOD(v, 3) HAVING COUNT(*) > 1")
    assert out == [("m", "INT"), ("n", "BIGINT NOT NULL")]


def test_ungrouped_column_rejected() -> None:
    with pytest.raises(SqlValidationError, match="not being grouped"):
        bind("SELECT k, v FROM t GROUP BY k")


def test_select_distinct_is_aggregate_without_calls() -> None:
    plan = bind("SELECT DISTINCT k, v FROM t")
    assert isinstance(plan, LogicalAggregate) and plan.aggs == () and plan.grouping == (0, 1)


def test_union_all_widens_types() -> None:
    out = schema("SELECT v FROM t UNION ALL SELECT CAST(w AS BIGINT) FROM u")
    assert out == [("v", "BIGINT")]


# ---------------------------------------------------------------------- windows
TVF = "SELECT window_start, window_end, k, COUNT(*) AS cnt FROM TABLE({fn}) GROUP BY window_start, window_end, k"


def test_tumble_tvf_binds_window_table_function() -> None:
    plan = bind(TVF.format(fn="TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '3' SECOND)"))
    tvf = [n for n in walk(plan) if isinstance(n, LogicalWindowTableFunction)][0]
    assert tvf.window.kind == "TUMBLE" and tvf.window.size_ms == 10000 and tvf.window.offset_ms == 3000
    assert [f.name for f in tvf.fields][-3:] == ["window_start", "window_end", "window_time"]
    assert str(tvf.fields[-1].type) == "TIMESTAMP(3) NOT NULL *ROWTIME*"


def test_hop_cumulate_session_specs() -> None:
    hop = bind(TVF.format(fn="HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"))
    w = [n for n in walk(hop) if isinstance(n, LogicalWindowTableFunction)][0].window
    assert (w.kind, w.slide_ms, w.size_ms) == ("HOP", 5000, 10000)
    cum = bind(TVF.format(fn="CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)"))
    w = [n for n in walk(cum) if isinstance(n, LogicalWindowTableFunction)][0].window
    assert (w.kind, w.step_ms, w.size_ms) == ("CUMULATE", 5000, 15000)
    ses = bind(TVF.format(fn="SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)"))
    w = [n for n in walk(ses) if isinstance(n, LogicalWindowTableFunction)][0].window
    assert (w.kind, w.gap_ms, w.partition_keys) == ("SESSION", 5000, (1,))


def test_tvf_requires_time_attribute_in_streaming_only() -> None:
    sql = TVF.format(fn="TUMBLE(TABLE p, DESCRIPTOR(ts), INTERVAL '10' SECOND)")
    with pytest.raises(SqlValidationError, match="requires the timecol is a time attribute"):
        bind(sql, "STREAMING")
    assert bind(sql, "BATCH").fields[0].name == "window_start"


def test_session_tvf_runs_in_batch() -> None:
    """Beyond Flink, which rejects unaligned windows in batch mode."""
    plan = bind(TVF.format(fn="SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)"), "BATCH")
    assert [f.name for f in plan.fields] == ["window_start", "window_end", "k", "cnt"]


def test_tvf_over_subquery() -> None:
    sql = TVF.format(fn="TUMBLE(TABLE (SELECT ts, k FROM t WHERE v > 0), DESCRIPTOR(ts), INTERVAL '10' SECOND)")
    assert [f.name for f in bind(sql).fields] == ["window_start", "window_end", "k", "cnt"]


def test_legacy_group_window() -> None:
    plan = bind(
        "SELECT k, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS wrt, "
        "COUNT(*) AS c FROM t GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), k"
    )
    wagg = [n for n in walk(plan) if isinstance(n, LogicalWindowAggregate)][0]
    assert wagg.window.kind == "TUMBLE" and wagg.window.size_ms == 10000 and wagg.legacy
    # Flink's SqlGroupedWindowFunction: over a (nullable) TIMESTAMP rowtime, start/end and the
    # rowtime take the column's type, nullability included (timezone.md's MyView4)
    assert [(f.name, str(f.type)) for f in plan.fields] == [
        ("k", "STRING"),
        ("ws", "TIMESTAMP(3)"),
        ("wrt", "TIMESTAMP(3) *ROWTIME*"),
        ("c", "BIGINT NOT NULL"),
    ]
    exprs = plan.exprs
    assert isinstance(exprs[1], InputRef) and wagg.fields[exprs[1].index].name == "window_start"


def test_legacy_session_runs_in_batch() -> None:
    """Beyond Flink, which has no batch plan for legacy SESSION windows."""
    plan = bind("SELECT k, COUNT(*) AS n FROM t GROUP BY SESSION(ts, INTERVAL '5' SECOND), k", "BATCH")
    assert [f.name for f in plan.fields] == ["k", "n"]


# ---------------------------------------------------------------------- errors
def test_unknown_column_with_hint_and_position() -> None:
    with pytest.raises(SqlValidationError) as info:
        bind("SELECT kk FROM t")
    e = info.value
    assert (e.line, e.column) == (1, 8) and "Column 'kk' not found" in e.message
    assert e.hint == "Did you mean 'k'?"


def test_unknown_table_with_hint() -> None:
    with pytest.raises(SqlValidationError) as info:
        bind("SELECT k FROM tt")
    assert "Object 'tt' not found" in info.value.message and info.value.hint == "Did you mean 't'?"


def test_ambiguous_column() -> None:
    with pytest.raises(SqlValidationError, match="Column 'k' is ambiguous"):
        bind("SELECT k FROM t JOIN u ON t.k = u.k")


def test_aggregate_in_where_position_on_continuation_line() -> None:
    with pytest.raises(SqlValidationError) as info:
        bind("SELECT k\nFROM t\nWHERE COUNT(*) > 1\nGROUP BY k")
    # The column of COUNT in the text as written.
    assert (info.value.line, info.value.column) == (3, 7)


def test_type_mismatch_comparison() -> None:
    with pytest.raises(SqlValidationError, match="Cannot apply '='"):
        bind("SELECT k FROM t WHERE v = TRUE")


def test_unsupported_clauses() -> None:
    # (ORDER BY / LIMIT and UNION are bound since issue 3: test_ranking.py, test_over_setops.py;
    # JOIN ... USING since the Flink docs audit: test_joins.py)
    with pytest.raises(UnsupportedSqlError):
        bind("SELECT t.k FROM t, LATERAL (SELECT COUNT(*) AS n FROM u WHERE u.k = t.k) x")


@pytest.mark.parametrize(
    ("literal", "text"),
    [
        ("U&'\\263A'", "\u263a"),
        ("u&'x\\0041y'", "xAy"),
        ("U&'#263A' UESCAPE '#'", "\u263a"),
        ("U&'a\\\\b\\+01F600'", "a\\b\U0001f600"),
    ],
)
def test_unicode_string_literals(literal: str, text: str) -> None:
    """overview.md's lexical rules: `U&'...'` with `\\XXXX` / `\\+XXXXXX` escapes, or another
    escape character given by UESCAPE."""
    plan = bind(f"SELECT {literal} AS s FROM t")
    assert plan.exprs[0].value == text and plan.fields[0].type.name == "CHAR"


def test_unicode_string_literal_errors() -> None:
    with pytest.raises(SqlValidationError, match="not exactly four hex digits") as e:
        bind("SELECT U&'\\26' FROM t")
    assert (e.value.line, e.value.column) == (1, 8)
    with pytest.raises(SqlValidationError, match="not a valid escape character"):
        bind("SELECT U&'x' UESCAPE '+' FROM t")


def test_from_table_keyword() -> None:
    """Calcite's tablePrimary `[ TABLE ] tablePath` (overview.md's grammar)."""
    assert schema("SELECT k FROM TABLE u") == schema("SELECT k FROM u")
    assert schema("SELECT x.k FROM TABLE u AS x JOIN TABLE t ON x.k = t.k") == [("k", "STRING")]


def test_group_window_proctime_property() -> None:
    """TUMBLE_PROCTIME / HOP_PROCTIME / SESSION_PROCTIME (window-agg.md's auxiliary
    functions): a processing-time attribute of the result rows, for a processing-time window."""
    extra = "CREATE TABLE q (k STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', 'path' = 'q.csv', 'format' = 'csv');"
    for w in (
        "TUMBLE(pt, INTERVAL '1' MINUTE)",
        "HOP(pt, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)",
        "SESSION(pt, INTERVAL '1' MINUTE)",
    ):
        fn = w.split("(")[0] + "_PROCTIME(" + w.split("(", 1)[1]
        plan = bind(f"SELECT k, {fn} AS p FROM q GROUP BY {w}, k", extra=extra)
        assert str(plan.fields[1].type) == "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*"
    with pytest.raises(SqlValidationError, match="TUMBLE_PROCTIME needs a window over a processing-time attribute"):
        bind("SELECT TUMBLE_PROCTIME(ts, INTERVAL '1' MINUTE) FROM t GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)")
