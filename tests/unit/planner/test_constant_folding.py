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
