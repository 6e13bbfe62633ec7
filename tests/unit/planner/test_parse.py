"""parse_script: statement kinds, DDL details, the whole conformance corpus, errors."""

import glob
import os

import pytest
from sqlglot import exp

from planner.errors import SqlParseError
from planner.parse import parse_script, parse_statement
from planner.statements import (
    CreateTable,
    CreateView,
    Describe,
    Drop,
    Explain,
    InsertInto,
    Query,
    ResetOption,
    SetOption,
    Show,
    StatementSet,
)
from runtime import types as rt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

DDL = """CREATE TEMPORARY TABLE IF NOT EXISTS db.t (
  id INT NOT NULL PRIMARY KEY NOT ENFORCED COMMENT 'the id',
  tags ARRAY<STRING NOT NULL>,
  r ROW<a INT, b MAP<STRING, BIGINT>>,
  ts TIMESTAMP(3),
  cost AS price * 2 COMMENT 'c',
  part BIGINT METADATA FROM 'partition' VIRTUAL,
  `offset` BIGINT METADATA VIRTUAL,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) COMMENT 'tbl' PARTITIONED BY (id) WITH ('connector' = 'kafka', 'a.b' = 'it''s')
  LIKE src (INCLUDING ALL EXCLUDING OPTIONS)"""


def test_create_table_details() -> None:
    (st,) = parse_script(DDL + ";")
    assert isinstance(st, CreateTable)
    assert st.name == ("db", "t") and st.temporary and st.if_not_exists
    cols = {c.name: c for c in st.columns}
    assert cols["id"].type == rt.INT(False) and cols["id"].comment == "the id"
    assert cols["tags"].type == rt.ARRAY(rt.STRING(False))
    assert cols["r"].type == rt.ROW([("a", rt.INT()), ("b", rt.MAP(rt.STRING(), rt.BIGINT()))])
    assert cols["cost"].kind == "computed" and isinstance(cols["cost"].expr, exp.Mul)
    assert cols["part"].kind == "metadata" and cols["part"].metadata_key == "partition" and cols["part"].virtual
    assert cols["offset"].metadata_key is None
    assert st.watermark.column == "ts" and isinstance(st.watermark.expr, exp.Sub)
    assert st.primary_key == ("id",)
    assert st.options == {"connector": "kafka", "a.b": "it's"}
    assert st.like.source == ("src",) and st.like.options == (("INCLUDING", "ALL"), ("EXCLUDING", "OPTIONS"))
    assert st.comment == "tbl" and st.partitioned_by == ("id",)


def test_table_level_primary_key_and_positions() -> None:
    st = parse_script(
        "\n\n  CREATE TABLE x (a INT, b STRING, PRIMARY KEY (a, b) NOT ENFORCED) WITH ('connector'='datagen')"
    )[0]
    assert st.primary_key == ("a", "b") and (st.line, st.column) == (3, 3)
    assert st.sql.startswith("CREATE TABLE x")


def test_statement_kinds() -> None:
    sts = parse_script(
        """SET 'table.local-time-zone' = 'UTC'; SET; RESET 'a'; RESET;
SHOW TABLES; SHOW CURRENT CATALOG; DESC t; DESCRIBE c.d.t;
DROP TEMPORARY VIEW IF EXISTS v; DROP TABLE t;
CREATE VIEW v (a, b) AS SELECT 1, 2;
INSERT INTO s SELECT * FROM t; INSERT OVERWRITE s (a) VALUES (1);
EXPLAIN CHANGELOG_MODE, ESTIMATED_COST SELECT 1;
EXPLAIN PLAN FOR SELECT 1;
EXECUTE STATEMENT SET BEGIN
  INSERT INTO a SELECT * FROM t;
  INSERT INTO b SELECT 1;
END;
BEGIN STATEMENT SET;
INSERT INTO a SELECT 1;
END;
(SELECT 1) UNION ALL SELECT 2;
WITH c AS (SELECT 1 AS x) SELECT x FROM c ORDER BY x LIMIT 1;
VALUES (1), (2)
"""
    )
    kinds = [type(s) for s in sts]
    assert kinds == [
        SetOption, SetOption, ResetOption, ResetOption, Show, Show, Describe, Describe, Drop, Drop,
        CreateView, InsertInto, InsertInto, Explain, Explain, StatementSet, StatementSet, Query, Query, Query,
    ]  # fmt: skip
    assert sts[0].key == "table.local-time-zone" and sts[0].value == "UTC"
    assert sts[1].key is None and sts[3].key is None
    assert sts[5].what == "CURRENT CATALOG"
    assert sts[7].name == ("c", "d", "t")
    assert sts[8].kind == "VIEW" and sts[8].temporary and sts[8].if_exists
    assert sts[10].column_names == ("a", "b")
    assert sts[12].overwrite and sts[12].columns == ("a",)
    assert sts[13].details == ("CHANGELOG_MODE", "ESTIMATED_COST")
    ss = sts[15]
    assert [i.table for i in ss.inserts] == [("a",), ("b",)]
    assert (ss.inserts[1].line, ss.inserts[1].column) == (sts[15].line + 2, 3)
    assert ss.inserts[1].sql == "INSERT INTO b SELECT 1"
    assert isinstance(sts[17].query, exp.Union)
    assert isinstance(sts[19].query, exp.Values)


def _corpus() -> list[str]:
    pats = [
        os.path.join(ROOT, "tests/conformance/cases/*/case.sql"),
        os.path.join(ROOT, "tests/conformance/flink-bugs/*/case.sql"),
        os.path.join(ROOT, "../shared/nexmark/sql/*.sql"),
        "/work/shared/nexmark/sql/*.sql",
    ]
    files: list[str] = []
    for p in pats:
        files.extend(sorted(glob.glob(p)))
    return sorted(set(map(os.path.realpath, files)))


def test_whole_corpus_parses() -> None:
    files = _corpus()
    assert len(files) > 50
    failures = []
    for f in files:
        with open(f) as fh:
            text = fh.read()
        expect_error = "err_syntax" in f
        try:
            parse_script(text)
        except SqlParseError as e:
            if not expect_error:
                failures.append(f"{f}: {e}")
        else:
            if expect_error:
                failures.append(f"{f}: parsed but should fail")
    assert not failures, "\n".join(failures)


def test_err_misspelled_keyword_case_901() -> None:
    with pytest.raises(SqlParseError) as ei:
        parse_script("CREATE TABLE t (a INT) WITH ('connector' = 'x');\n\nSELEC k, v\nFROM t;")
    e = ei.value
    assert "Non-query expression encountered in illegal context" in e.message
    assert (e.line, e.column, e.statement_line) == (1, 1, 3)
    assert "SELECT" in (e.hint or "")
    assert e.sql == "SELEC k, v\nFROM t"


def test_err_trailing_comma_case_902() -> None:
    with pytest.raises(SqlParseError) as ei:
        parse_script("SELECT 1;\nSELECT k,\n       v,\nFROM t;")
    e = ei.value
    assert e.message == "Incorrect syntax near the keyword 'FROM' at line 3, column 1."
    assert (e.line, e.column, e.statement_line) == (3, 1, 2)
    rendered = e.render().splitlines()
    assert rendered[1] == "  FROM t" and rendered[2] == "  ^"


@pytest.mark.parametrize(
    ("sql", "line", "col", "needle"),
    [
        ("SELECT a FROM t WHERE", 1, 22, "<EOF>"),
        ("SELECT a\nFROM t\nWHERE a = = 1", 3, 11, '"="'),
        ("CREATE TABLE t (a INT,\n  b FOO BAR)", 2, 5, "FOO"),
        ("CREATE TABLE t (a INT) WITH ('k' 'v')", 1, 34, "'v'"),
        ("SELECT 'abc FROM t", 1, 8, "unterminated"),
        ("CREATE TABLE t (a INT PRIMARY KEY ENFORCED)", 1, 35, "NOT ENFORCED"),
        ("DROP SCHEMA x", 1, 6, "SCHEMA"),
        ("EXECUTE STATEMENT SET BEGIN SELECT 1; END", 1, 29, "Only INSERT"),
    ],
)
def test_error_positions(sql: str, line: int, col: int, needle: str) -> None:
    with pytest.raises(SqlParseError) as ei:
        parse_script(sql)
    e = ei.value
    assert (e.line, e.column) == (line, col), e.render()
    assert needle in e.message or needle in (e.hint or ""), e.render()
    assert e.statement_line == 1


def test_no_foreign_exception_escapes() -> None:
    for bad in ["SELECT (", "CREATE TABLE", "INSERT INTO", "SELECT * FROM TABLE(", "SET 'a' =", "EXPLAIN", "))"]:
        with pytest.raises(SqlParseError):
            parse_script(bad)


def test_computed_and_watermark_expr_positions() -> None:
    st = parse_statement(
        "CREATE TABLE t (\n  ts TIMESTAMP(3),\n  c AS UPPER(s),\n  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)"
    )
    up = st.columns[1].expr
    assert (up.meta["line"], up.meta["col"]) == (3, 8)
    col = st.watermark.expr.this
    assert (col.meta["line"], col.meta["col"]) == (4, 23)
