"""CAST validation at planning time: Flink's messages, the position of the CAST and a hint
naming what the target accepts (the pair table itself is tests/unit/runtime/functions/
test_cast_table.py). Also LIKE/SIMILAR TO with a column ESCAPE and GET(row, position)."""

from __future__ import annotations

import pytest

from planner.binder import bind_query
from planner.catalog import Catalog
from planner.errors import SqlValidationError
from planner.parse import parse_script
from planner.statements import Query
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.expressions import col


def bind(sql: str) -> object:
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    return bind_query(st.query, Catalog(), st.sql, "BATCH")


@pytest.mark.parametrize(
    ("sql", "message", "hint"),
    [
        (
            "SELECT 1, CAST(TIMESTAMP '2024-01-01 00:00:00' AS BIGINT)",
            "The cast from TIMESTAMP type to NUMERIC type is not allowed. It's recommended to use "
            "UNIX_TIMESTAMP(CAST(timestamp_col AS STRING)) instead.",
            "CAST to BIGINT accepts: BOOLEAN, numeric types, character strings",
        ),
        (
            "SELECT 1, CAST(1 AS TIMESTAMP_LTZ(3))",
            "It's recommended to use TO_TIMESTAMP_LTZ(numeric_col, precision) instead.",
            "CAST to TIMESTAMP_WITH_LOCAL_TIME_ZONE(3) accepts: character strings, DATE, TIME, TIMESTAMP",
        ),
        (
            "SELECT 1, CAST(DATE '2024-01-01' AS TIME)",
            "Cast function cannot convert value of type DATE to type TIME",
            "CAST to TIME accepts: character strings, TIME, TIMESTAMP, TIMESTAMP_WITH_LOCAL_TIME_ZONE",
        ),
        # only a bare NULL skips the check (Calcite's isNullLiteral)
        (
            "SELECT 1, CAST(CAST(NULL AS INT) AS DATE)",
            "Cast function cannot convert value of type INTEGER to type DATE",
            "CAST to DATE accepts",
        ),
        (
            "SELECT 1, CAST(ARRAY[1] AS INT)",
            "Cast function cannot convert value of type INTEGER ARRAY to type INTEGER",
            "CAST to INTEGER accepts",
        ),
    ],
)
def test_refused_cast_names_flinks_reason_position_and_hint(sql: str, message: str, hint: str) -> None:
    with pytest.raises(SqlValidationError) as info:
        bind(sql)
    err = info.value
    assert message in str(err)
    assert (err.line, err.column) == (1, 11)
    assert err.hint is not None and hint in err.hint


def test_accepted_casts_bind() -> None:
    bind("SELECT CAST(TIME '12:34:56' AS TIMESTAMP(3)), CAST(NULL AS DATE), CAST(ARRAY[1] AS STRING)")


@pytest.fixture(scope="module")
def env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def test_like_and_similar_to_take_a_column_escape(env: TableEnvironment) -> None:
    """Calcite parses any operand after ESCAPE; Flink matches row by row with each row's
    escape character."""
    rows = env.execute_sql(
        "SELECT s LIKE p ESCAPE e, s NOT LIKE p ESCAPE e, s SIMILAR TO p ESCAPE e FROM (VALUES "
        "('a_c', 'a!_c', '!'), ('abc', 'a!_c', '!'), ('a%', 'a#%', '#'), ('a%', 'a#%', CAST(NULL AS STRING))"
        ") AS t(s, p, e)"
    ).collect()
    assert [tuple(r) for r in rows] == [
        (True, False, True),
        (False, True, False),
        (True, False, True),
        (None, None, None),
    ]
    with pytest.raises(Exception, match="Invalid escape character '!!'"):
        list(env.execute_sql("SELECT s LIKE 'a!_c' ESCAPE e FROM (VALUES ('a_c', '!!')) AS t(s, e)").collect())


def test_table_api_get_takes_a_name_or_a_position_from_0(env: TableEnvironment) -> None:
    """PyFlink's Expression.get (Flink's GET): a ROW field by name or 0-based position."""
    t = env.sql_query("SELECT ROW(1, 'a') AS r, CAST(ROW(2, 'b') AS ROW<x INT, y STRING>) AS n")
    got = t.select(col("r").get(0), col("r").get(1), col("n").get("x"), col("n").get(1)).execute().collect()
    assert [tuple(r) for r in got] == [(1, "a", 2, "b")]
    with pytest.raises(SqlValidationError, match="Field index 2 is out of range"):
        list(t.select(col("n").get(2)).execute().collect())
