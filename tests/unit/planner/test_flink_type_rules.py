"""Flink's type rules end to end (issue 14): DECIMAL result types, INTERVAL literals, typed
literals, CAST validation, implicit casts on INSERT and the sink enforcers.

Each expectation is Flink 2.3's answer (its LogicalTypeMerging / LogicalTypeCasts rules and
the sink enforcers' documented behaviour)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.errors import SqlError, SqlValidationError
from runtime.errors import JobError
from runtime.sink_constraints import not_null_action
from streamsql import EnvironmentSettings, TableEnvironment


def _env(mode: str = "batch") -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if mode == "batch" else EnvironmentSettings.in_streaming_mode()
    return TableEnvironment.create(settings)


def _rows(env: TableEnvironment, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r) for r in env.execute_sql(sql).collect()]


def _types(env: TableEnvironment, sql: str) -> list[str]:
    return [str(f.type) for f in env.execute_sql(sql).get_table_schema()]


def _amounts(tmp_path: Path) -> TableEnvironment:
    (tmp_path / "t.json").write_text(
        "\n".join(json.dumps(r) for r in [{"k": "a", "amt": 1.5}, {"k": "a", "amt": 2.25}, {"k": "b", "amt": 7.0}])
    )
    env = _env()
    env.execute_sql(
        f"CREATE TABLE t (k STRING, amt DECIMAL(10, 2)) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 't.json'}', 'format' = 'json')"
    )
    return env


# ---------------------------------------------------------------------- 1. DECIMAL
def test_sum_over_count_of_decimal_is_decimal_38_6(tmp_path: Path) -> None:
    env = _amounts(tmp_path)
    sql = "SELECT k, SUM(amt) / COUNT(*) AS a, SUM(amt) AS s, AVG(amt) AS v, SUM(amt) * SUM(amt) AS p FROM t GROUP BY k"
    assert _types(env, sql)[1:] == [
        "DECIMAL(38, 6)",  # DECIMAL(38, 2) / DECIMAL(19, 0): scale 22 reduced to keep 36 digits
        "DECIMAL(38, 2)",
        "DECIMAL(38, 6)",
        "DECIMAL(38, 4)",
    ]
    rows = sorted(_rows(env, sql))
    assert [(k, str(a), str(s), str(v), str(p)) for k, a, s, v, p in rows] == [
        ("a", "1.875000", "3.75", "1.875000", "14.0625"),
        ("b", "7.000000", "7.00", "7.000000", "49.0000"),
    ]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("CAST('1' AS DECIMAL(38, 18)) / CAST('3' AS DECIMAL(38, 18))", "0.333333"),
        ("CAST('1' AS DECIMAL(38, 0)) / 3", "0.333333"),
        # DECIMAL(38, 37) + DECIMAL(10, 0): 48 digits → DECIMAL(38, 27)
        ("CAST('0.1' AS DECIMAL(38, 37)) + 1", "1." + "1".ljust(27, "0")),
        # DECIMAL(38, 37) * DECIMAL(38, 37): p1 + p2 + 1 = 77 digits → DECIMAL(38, 35)
        ("CAST('1.5' AS DECIMAL(38, 37)) * CAST('1.5' AS DECIMAL(38, 37))", "2." + "25".ljust(35, "0")),
        # DECIMAL(38, 18) * DECIMAL(10, 0): 49 digits → DECIMAL(38, 7)
        ("CAST('99999999999999999999.999999999999999999' AS DECIMAL(38, 18)) * 10", "1" + "0" * 21 + ".0000000"),
        # a value that does not fit its (nullable) result type is NULL (DecimalData overflow)
        ("TRY_CAST('99999999999999999999999999999.999' AS DECIMAL(38, 3)) * 100000000000", None),
    ],
)
def test_wide_decimal_arithmetic(expr: str, expected: str | None) -> None:
    ((value,),) = _rows(_env(), f"SELECT {expr}")
    assert (None if value is None else str(value)) == expected


def test_out_of_range_numeric_literal_is_a_positioned_error() -> None:
    with pytest.raises(SqlError) as info:
        _rows(_env(), "SELECT\n  CEIL(99999999999999999999.5)")
    assert "Numeric literal '99999999999999999999.5' out of range" in str(info.value)
    assert (info.value.line, info.value.column) == (2, 8)


# ---------------------------------------------------------------------- 2. INTERVAL
def test_year_to_month_and_day_to_second_intervals() -> None:
    env = _env()
    ((a, b, c, d, e, f, g),) = _rows(
        env,
        "SELECT TIMESTAMP '2024-03-31 10:00:00' - INTERVAL '1-1' YEAR TO MONTH, "
        "DATE '2024-03-31' + INTERVAL '-1-1' YEAR TO MONTH, "
        "TIMESTAMP '2024-01-01 00:00:00.000' + INTERVAL '1 02:03:04.005' DAY TO SECOND, "
        "EXTRACT(MONTH FROM INTERVAL '2-10' YEAR TO MONTH), "
        "CAST(INTERVAL '2-10' YEAR TO MONTH AS STRING), "
        "CAST(INTERVAL '10 00:00:00.004' DAY TO SECOND AS STRING), "
        "CAST(INTERVAL '02:30' HOUR TO MINUTE AS STRING)",
    )
    assert str(a) == "2023-02-28 10:00:00"
    assert str(b) == "2023-02-28"
    assert str(c) == "2024-01-02 02:03:04.005000"
    assert (d, e, f, g) == (10, "+2-10", "+10 00:00:00.004", "+0 02:30:00.000")


def test_bad_interval_literal_is_a_positioned_error() -> None:
    with pytest.raises(SqlError) as info:
        _rows(_env(), "SELECT INTERVAL '1:1' YEAR TO MONTH")
    assert "Illegal interval literal" in str(info.value)
    assert (info.value.line, info.value.column) == (1, 17)


def test_typed_literal_precision_follows_the_text() -> None:
    env = _env()
    sql = "SELECT TIMESTAMP '2024-02-29 12:34:56', TIMESTAMP '2024-02-29 12:34:56.1', TIME '12:34:56.789'"
    assert _types(env, sql) == ["TIMESTAMP(0) NOT NULL", "TIMESTAMP(1) NOT NULL", "TIME(3) NOT NULL"]
    with pytest.raises(SqlError, match="Illegal TIMESTAMP literal '2024-02-29T12:00:00'"):
        _rows(env, "SELECT TIMESTAMP '2024-02-29T12:00:00'")


# ---------------------------------------------------------------------- 3. CAST
def test_cast_to_unknown_type_is_a_positioned_error() -> None:
    env = _env()
    with pytest.raises(SqlError) as info:
        _rows(env, "SELECT\n  CAST(1 AS NOSUCHTYPE)")
    assert "Unknown type 'NOSUCHTYPE'" in str(info.value)
    assert (info.value.line, info.value.column) == (2, 13)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("CAST(ARRAY[1] AS INT)", "Cast function cannot convert value of type INTEGER ARRAY to type INTEGER"),
        ("CAST(TRUE AS DATE)", "Cast function cannot convert value of type BOOLEAN to type DATE"),
    ],
)
def test_impossible_cast_is_a_validation_error(expr: str, message: str) -> None:
    with pytest.raises(SqlError) as info:
        _rows(_env(), f"SELECT {expr}")
    assert message in str(info.value)
    assert info.value.column == 8


# ---------------------------------------------------------------------- 4. implicit casts on INSERT
def _sink_env(tmp_path: Path, sink_columns: str, *settings: str) -> TableEnvironment:
    (tmp_path / "src.json").write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": 1, "s": "hello", "ts": "2024-01-01 10:00:00", "ltz": "2024-01-01 10:00:00Z"},
                {"id": None, "s": "zz", "ts": None, "ltz": None},
            ]
        )
    )
    env = _env()
    for s in settings:
        env.execute_sql(s)
    env.execute_sql(
        "CREATE TABLE src (id INT, s STRING, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3)) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'src.json'}', 'format' = 'json')"
    )
    env.execute_sql(
        f"CREATE TABLE snk ({sink_columns}) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json')"
    )
    return env


def _written(tmp_path: Path) -> list[dict[str, object]]:
    out = []
    for f in sorted((tmp_path / "out").rglob("*")):
        if f.is_file() and not f.name.startswith("."):
            out += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    return out


def test_insert_casts_timestamp_to_ltz_and_back(tmp_path: Path) -> None:
    env = _sink_env(tmp_path, "a TIMESTAMP_LTZ(3), b TIMESTAMP(3)", "SET 'table.local-time-zone' = 'Asia/Shanghai'")
    env.execute_sql("INSERT INTO snk SELECT ts, ltz FROM src WHERE id = 1").wait()
    assert _written(tmp_path) == [{"a": "2024-01-01 02:00:00Z", "b": "2024-01-01 18:00:00"}]


def test_insert_refuses_a_cast_flink_does_not_make_implicitly(tmp_path: Path) -> None:
    env = _sink_env(tmp_path, "a INT")
    with pytest.raises(SqlError, match="Incompatible types for sink column 'a'"):
        env.execute_sql("INSERT INTO snk SELECT s FROM src")


# ---------------------------------------------------------------------- 5. sink enforcers
def test_type_length_enforcer_ignore_is_the_default(tmp_path: Path) -> None:
    env = _sink_env(tmp_path, "id INT, s VARCHAR")  # VARCHAR = VARCHAR(1)
    env.execute_sql("INSERT INTO snk SELECT id, s FROM src WHERE id = 1").wait()
    assert _written(tmp_path) == [{"id": 1, "s": "hello"}]


def test_type_length_enforcer_trim_pad(tmp_path: Path) -> None:
    env = _sink_env(
        tmp_path, "id INT, s VARCHAR(2), c CHAR(4)", "SET 'table.exec.sink.type-length-enforcer' = 'TRIM_PAD'"
    )
    env.execute_sql("INSERT INTO snk SELECT id, s, CAST(s AS CHAR(2)) FROM src").wait()
    assert sorted(_written(tmp_path), key=str) == sorted(
        [{"id": 1, "s": "he", "c": "he  "}, {"id": None, "s": "zz", "c": "zz  "}], key=str
    )


def test_not_null_enforcer_error_names_the_column(tmp_path: Path) -> None:
    env = _sink_env(tmp_path, "id INT NOT NULL, s STRING")
    with pytest.raises(JobError, match="Column 'id' is NOT NULL, however, a null value is being written into it"):
        env.execute_sql("INSERT INTO snk SELECT id, s FROM src").wait()


def test_not_null_enforcer_drop(tmp_path: Path) -> None:
    env = _sink_env(tmp_path, "id INT NOT NULL, s STRING", "SET 'table.exec.sink.not-null-enforcer' = 'DROP'")
    env.execute_sql("INSERT INTO snk SELECT id, s FROM src").wait()
    assert _written(tmp_path) == [{"id": 1, "s": "hello"}]


def test_not_null_enforcer_checks_query_results() -> None:
    """A NOT NULL result column receiving NULL (a DECIMAL cast overflowing) fails the query,
    as Flink's collect sink does; DROP drops the row."""
    sql = "SELECT CAST(CAST('99999999999999999999.99' AS DECIMAL(38, 2)) AS DECIMAL(20, 0)) AS c1"
    with pytest.raises(JobError, match="Column 'c1' is NOT NULL"):
        _rows(_env(), sql)
    env = _env()
    env.execute_sql("SET 'table.exec.sink.not-null-enforcer' = 'DROP'")
    assert _rows(env, sql) == []


def test_bad_enforcer_value_is_refused() -> None:
    env = _env()
    # SET checks the value against the key's declaration (runtime/sink_constraints.py).
    with pytest.raises(SqlValidationError, match="'MAYBE' for key 'table.exec.sink.not-null-enforcer'"):
        env.execute_sql("SET 'table.exec.sink.not-null-enforcer' = 'MAYBE'")
    # A job graph carrying a bad value (not set through SET) fails naming the key too.
    with pytest.raises(JobError, match="table.exec.sink.not-null-enforcer"):
        not_null_action({"table.exec.sink.not-null-enforcer": "MAYBE"})


# ---------------------------------------------------------------------- JSON_VALUE RETURNING INT
def test_json_value_returning_int_of_a_non_int_fails_the_job() -> None:
    """Flink casts the JSON value's Java object to Integer: a string or fraction fails at run
    time (ON ERROR does not apply), an integer is returned."""
    assert _rows(_env(), "SELECT JSON_VALUE('{\"a\": 7}', '$.a' RETURNING INT)") == [(7,)]
    with pytest.raises(JobError, match="ClassCastException"):
        _rows(_env(), "SELECT JSON_VALUE('{\"a\": \"x\"}', '$.a' RETURNING INT)")
