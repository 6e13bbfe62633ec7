"""The flink sqlglot dialect: AST shapes the binder relies on, types, positions."""

import pytest
import sqlglot
from sqlglot import exp

import planner  # noqa: F401 - registers the dialect
from planner.dialect.ast import Descriptor, TableArgument, TableFunction
from planner.dialect.types import to_data_type
from runtime import types as rt


def one(sql: str) -> exp.Expression:
    return sqlglot.parse_one("SELECT " + sql, read="flink").expressions[0]


def test_dialect_registered_and_case_sensitive() -> None:
    e = sqlglot.parse_one("SELECT `My Col`, Abc FROM T", read="flink")
    assert [c.name for c in e.expressions] == ["My Col", "Abc"]


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("INTERVAL '10' SECOND", "SECOND"),
        ("INTERVAL '10' SECONDS", "SECOND"),
        ("INTERVAL '2' MINUTES", "MINUTE"),
        ("INTERVAL '1' DAYS", "DAY"),
        ("INTERVAL '1' MONTH", "MONTH"),
        ("INTERVAL '1:30' HOUR TO MINUTE", "HOUR TO MINUTE"),
    ],
)
def test_intervals(text: str, unit: str) -> None:
    e = one(text)
    assert isinstance(e, exp.Interval)
    assert e.this.is_string and e.args["unit"] == exp.var(unit)


def test_table_function_shapes() -> None:
    sql = (
        "SELECT * FROM TABLE(SESSION(TABLE t PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS w "
        "JOIN TABLE(TUMBLE(DATA => TABLE u, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE)) v ON TRUE"
    )
    e = sqlglot.parse_one(sql, read="flink")
    tf = e.args["from_"].this
    assert isinstance(tf, TableFunction) and tf.name == "SESSION" and tf.alias == "w"
    targ, desc, size = tf.expressions
    assert isinstance(targ, TableArgument) and targ.this.name == "t"
    assert [c.name for c in targ.args["partition_by"]] == ["k"]
    assert isinstance(desc, Descriptor) and desc.expressions[0].name == "ts"
    assert isinstance(size, exp.Interval)
    tf2 = e.args["joins"][0].this
    assert isinstance(tf2, TableFunction) and tf2.alias == "v"
    kw = tf2.expressions
    assert all(isinstance(k, exp.Kwarg) for k in kw)
    assert [k.this.name for k in kw] == ["DATA", "TIMECOL", "SIZE"]
    assert isinstance(kw[0].expression, TableArgument) and isinstance(kw[1].expression, Descriptor)
    assert "TABLE(SESSION(TABLE t PARTITION BY (k), DESCRIPTOR(ts)" in e.sql(dialect="flink")


def test_flink_function_forms() -> None:
    assert isinstance(one("TRIM(BOTH 'a' FROM s)"), exp.Trim)
    sub = one("SUBSTRING(s FROM 2 FOR 3)")
    assert isinstance(sub, exp.Substring) and sub.args["length"].name == "3"
    jo = one("JSON_OBJECT('k' VALUE v ABSENT ON NULL)")
    assert isinstance(jo, exp.JSONObject) and jo.args["null_handling"] == "ABSENT ON NULL"
    ja = one("JSON_ARRAY(a, b NULL ON NULL)")
    assert isinstance(ja, exp.JSONArray) and len(ja.expressions) == 2 and ja.args["null_handling"] == "NULL ON NULL"
    f = one("COUNT(*) FILTER (WHERE x > 1)")
    assert isinstance(f, exp.Filter) and isinstance(f.this, exp.Count)
    m = one("MAP['a', 1, 'b', 2]")
    assert isinstance(m, exp.VarMap) and len(m.args["keys"].expressions) == 2
    assert isinstance(one("ARRAY[1, 2]"), exp.Array)
    assert isinstance(one("arr[1]"), exp.Bracket)
    assert isinstance(one("TRY_CAST(x AS INT)"), exp.TryCast)
    assert isinstance(one("a || b"), exp.DPipe)
    assert isinstance(one("IF(c, a, b)"), exp.If)
    assert isinstance(one("CURRENT_TIMESTAMP"), exp.CurrentTimestamp)
    ta = one("TIMESTAMPADD(DAY, 1, ts)")
    assert isinstance(ta, exp.Anonymous) and ta.expressions[0] == exp.var("DAY")
    jv = one("JSON_VALUE(j, '$.a' RETURNING INT DEFAULT -1 ON ERROR)")
    assert isinstance(jv, exp.JSONValue) and jv.args["returning"].this == exp.DataType.Type.INT
    lg = one("LISTAGG(x, ',')")
    assert lg.name.upper() == "LISTAGG" or isinstance(lg, exp.Anonymous)


def test_trailing_comma_rejected() -> None:
    with pytest.raises(sqlglot.errors.ParseError):
        sqlglot.parse_one("SELECT a, FROM t", read="flink")


def test_match_recognize_within() -> None:
    e = sqlglot.parse_one(
        "SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY k ORDER BY ts MEASURES A.v AS av "
        "PATTERN (A B) WITHIN INTERVAL '3' SECOND DEFINE B AS v > A.v)",
        read="flink",
    )
    mr = e.find(exp.MatchRecognize)
    assert mr is not None and isinstance(mr.args["within"], exp.Interval)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("INTEGER", rt.INT()),
        ("DOUBLE PRECISION", rt.DOUBLE()),
        ("DECIMAL", rt.DECIMAL(10, 0)),
        ("DEC(5, 2)", rt.DECIMAL(5, 2)),
        ("NUMERIC(4)", rt.DECIMAL(4, 0)),
        ("STRING", rt.STRING()),
        ("VARCHAR(10)", rt.VARCHAR(10)),
        ("CHAR(3)", rt.CHAR(3)),
        ("BYTES", rt.BYTES()),
        ("BINARY(4)", rt.DataType("BINARY", precision=4)),
        ("VARBINARY(5)", rt.DataType("VARBINARY", precision=5)),
        ("TIME(3)", rt.TIME(3)),
        ("TIMESTAMP", rt.TIMESTAMP(6)),
        ("TIMESTAMP(3) WITHOUT TIME ZONE", rt.TIMESTAMP(3)),
        ("TIMESTAMP_LTZ(3)", rt.TIMESTAMP_LTZ(3)),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", rt.TIMESTAMP_LTZ(3)),
        ("ARRAY<INT NOT NULL>", rt.ARRAY(rt.INT(False))),
        ("MAP<STRING, ARRAY<BIGINT>>", rt.MAP(rt.STRING(), rt.ARRAY(rt.BIGINT()))),
        ("MULTISET<STRING>", rt.DataType("MULTISET", children=(rt.STRING(),))),
        ("ROW<a INT, b STRING>", rt.ROW([("a", rt.INT()), ("b", rt.STRING())])),
        (
            "ROW(a INT NOT NULL, `b c` ROW<x DOUBLE>)",
            rt.ROW([("a", rt.INT(False)), ("b c", rt.ROW([("x", rt.DOUBLE())]))]),
        ),
    ],
)
def test_to_data_type(text: str, expected: rt.DataType) -> None:
    cast = one(f"CAST(x AS {text})")
    assert to_data_type(cast.args["to"]) == expected


def test_function_positions_point_at_name() -> None:
    from planner.parse import parse_statement

    q = parse_statement("SELECT a,\n  UPPER(b.c), CAST(x AS INT), foo(z)\nFROM db.t").query
    up = q.find(exp.Upper)
    assert (up.meta["line"], up.meta["col"]) == (2, 3)
    assert (q.find(exp.Cast).meta["line"], q.find(exp.Cast).meta["col"]) == (2, 15)
    assert q.find(exp.Anonymous).meta["col"] == 31
    col = q.find(exp.Column, bfs=False)
    assert (col.meta["line"], col.meta["col"]) == (1, 8)
    bc = [c for c in q.find_all(exp.Column) if c.name == "c"][0]
    assert (bc.meta["line"], bc.meta["col"]) == (2, 9)
    tbl = q.find(exp.Table)
    assert (tbl.meta["line"], tbl.meta["col"]) == (3, 6)


def test_case_value_lists_and_one_parse_per_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """`CASE x WHEN a, b THEN` (Calcite's value list) is the searched `CASE WHEN x = a OR
    x = b THEN`; a CASE without lists keeps its shape. Every CASE is parsed once: nested
    CASEs re-parsed per level took seconds at 12 levels."""
    from planner.dialect.flink import Flink

    listed = one("CASE k WHEN 1, 2 THEN 'a' WHEN 3 THEN 'b' ELSE 'c' END")
    assert listed.this is None and listed.sql() == "CASE WHEN k = 1 OR k = 2 THEN 'a' WHEN k = 3 THEN 'b' ELSE 'c' END"
    plain = one("CASE k WHEN 1 THEN 'a' END")
    assert plain.this is not None and plain.sql() == "CASE k WHEN 1 THEN 'a' END"

    calls = 0
    original = Flink.Parser._parse_disjunction

    def counting(self: Flink.Parser) -> exp.Expr | None:
        nonlocal calls
        calls += 1
        return original(self)

    monkeypatch.setattr(Flink.Parser, "_parse_disjunction", counting)
    per_depth: list[list[int]] = []
    for depth in (4, 8, 12):
        searched, simple = "'x'", "'x'"
        for i in range(depth):
            searched = f"CASE WHEN k = {i} THEN {searched} ELSE 'n' END"
            simple = f"CASE {i} WHEN {i}, k THEN {simple} ELSE 'n' END"
        counts = []
        for text in (searched, simple):
            calls = 0
            one(text)
            counts.append(calls)
        per_depth.append(counts)
    # linear in the depth: four more levels cost the same number of parse calls each time
    (a4, b4), (a8, b8), (a12, b12) = per_depth
    assert (a12 - a8, b12 - b8) == (a8 - a4, b8 - b4)
