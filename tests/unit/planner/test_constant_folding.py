"""Flink's planning-time simplification of constant expressions (planner/binder/folding.py),
where it gives another answer than evaluating per row would: each expectation is Flink
2.3's answer from the functions oracle corpus."""

from __future__ import annotations

import pytest

from planner.errors import SqlError
from streamsql import EnvironmentSettings, TableEnvironment


def _one(sql: str) -> object:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    (row,) = [tuple(r) for r in env.execute_sql(sql).collect()]
    return row[0]


def test_same_operand_comparison_is_decided_without_comparing() -> None:
    # Calcite: x = x is `NULL OR x IS NOT NULL`, so NaN equals itself here
    assert _one("SELECT CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)") is True
    assert _one("SELECT CAST('NaN' AS DOUBLE) <> CAST('NaN' AS DOUBLE)") is False
    assert _one("SELECT CAST(NULL AS INT) = CAST(NULL AS INT)") is None


def test_same_nondeterministic_operand_is_one_program_reference() -> None:
    # Calcite's RexProgram holds UUID() once: `$t0 <> $t0` simplifies to FALSE
    assert _one("SELECT UUID() <> UUID()") is False
    assert _one("SELECT RAND() = RAND()") is True
    # separate columns still draw separately
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    (row,) = [tuple(r) for r in env.execute_sql("SELECT UUID(), UUID()").collect()]
    assert row[0] != row[1]


def test_string_literals_compare_as_java_strings() -> None:
    # UTF-16 code units: the surrogate of U+1F600 (0xD83D) sorts below U+FFFF
    assert _one("SELECT '\U0001f600' > '\uffff'") is False
    assert _one("SELECT 'b' > 'a'") is True


def test_cast_chain_keeps_the_decimal_literal() -> None:
    assert _one("SELECT CAST(CAST(0.1 AS FLOAT) AS DOUBLE)") == 0.1


def test_try_cast_overflowing_float_literal_fails_planning() -> None:
    with pytest.raises(SqlError, match="Infinite or NaN"):
        _one("SELECT TRY_CAST(1e40 AS FLOAT)")


def test_missing_element_of_literal_collection_is_the_primitive_default() -> None:
    assert _one("SELECT MAP['a', 1]['z']") == -1
    assert _one("SELECT ARRAY[1, 2, 3][4]") == -1
    assert _one("SELECT MAP['a', 1][CAST(NULL AS STRING)]") is None
    assert _one("SELECT MAP['a', 1]['a']") == 1


# Flink 2.3's ExpressionReducer skips a VARIANT constant without moving its result index
# on: every later constant of the SELECT gets an earlier constant's value. Each expectation
# below is Flink 2.3.0's answer (run on Flink while pinning the rule down).


def _row(sql: str) -> tuple[object, ...]:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    (row,) = [tuple(r) for r in env.execute_sql(sql).collect()]
    return row


def test_constant_after_a_variant_constant_gets_the_variants_value() -> None:
    # the corpus case variant_lit_02b: the JSON_STRING gets the NULL of the first column
    sql = (
        "SELECT PARSE_JSON('[1, 2, 3]')[4], PARSE_JSON('{\"a\":{\"b\":2}}')['a']['b'], "
        "PARSE_JSON('{\"a\":1}')['z'], JSON_STRING(PARSE_JSON('{\"a\":{\"b\":[1]}}')['a'])"
    )
    assert _row(sql) == (None, "2", None, None)
    # alone, or before the VARIANT constants, it is the JSON text
    assert _row("SELECT JSON_STRING(PARSE_JSON('{\"a\":{\"b\":[1]}}')['a']), PARSE_JSON('[1]')[4]") == (
        '{"b":[1]}',
        None,
    )


def test_a_null_handed_to_a_not_null_constant_keeps_its_own_value() -> None:
    # LOWER('B') (NOT NULL) gets the VARIANT's NULL and keeps itself; CONCAT gets LOWER's 'b'
    assert _row("SELECT ARRAY[1, 2], UPPER('x'), PARSE_JSON('[1]')[5], LOWER('B'), CONCAT('p', 'q')") == (
        [1, 2],
        "X",
        None,
        "b",
        "b",
    )
    # a nullable constant takes the NULL
    # ... and passes its own value on: UPPER('q') becomes the JSON_VALUE's '1'
    assert _row("SELECT TRY_PARSE_JSON('{'), JSON_VALUE('{\"a\":1}', '$.a'), UPPER('q')") == (None, None, "1")


def test_literals_columns_and_nondeterministic_calls_are_not_constants() -> None:
    assert _row("SELECT TRY_PARSE_JSON('{'), CAST('3' AS INT), 'lit', CAST(NULL AS INT), CONCAT('a', 'b')") == (
        None,
        3,
        "lit",
        None,
        "ab",
    )
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    rows = [
        tuple(r)
        for r in env.execute_sql(
            "SELECT id, COALESCE(TRY_PARSE_JSON(s), PARSE_JSON('[1]')[3]), UPPER('a'), RAND() < 2, LOWER('Q') "
            "FROM (VALUES (1, '5'), (2, '{')) AS t(id, s)"
        ).collect()
    ]
    # the constant inside COALESCE counts; LOWER('Q') gets UPPER('a')'s value
    assert sorted(rows) == [(1, "5", "A", True, "A"), (2, None, "A", True, "A")]


def test_numbers_are_handed_over_as_java_narrows_them() -> None:
    row = _row(
        "SELECT TRY_PARSE_JSON('{'), ABS(CAST(-3000000000 AS BIGINT)), ABS(-2), ABS(CAST(-5.7 AS DOUBLE)), ABS(-9)"
    )
    assert row == (None, 3000000000, -1294967296, 2.0, 5)
    # a DATE is an int of days for the reducer
    assert _row("SELECT TRY_PARSE_JSON('{'), ABS(-5), DATE '2024-01-01' + INTERVAL '1' DAY")[2].isoformat() == (
        "1970-01-06"
    )
    # CHAR(n) receivers are padded
    assert _row("SELECT TRY_PARSE_JSON('{'), UPPER('ab'), CAST(UPPER('x') AS CHAR(4))")[2] == "AB  "


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT PARSE_JSON('1'), 'x' || 'y'",  # a VARIANT value into a string
        "SELECT PARSE_JSON('1'), ABS(-3)",  # a VARIANT value into an INT
        "SELECT TRY_PARSE_JSON('{'), ABS(-5), 2 > ABS(-1)",  # an INT into a BOOLEAN
        "SELECT TRY_PARSE_JSON('{'), ABS(-5), ABS(-2.5)",  # an INT into a DECIMAL
    ],
)
def test_a_value_of_another_java_class_fails_like_flinks_class_cast(sql: str) -> None:
    from runtime.errors import EvaluationError

    with pytest.raises(EvaluationError, match="ClassCastException"):
        _row(sql)
