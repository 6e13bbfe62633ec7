"""Python UDFs end to end, both modes: scalar (general / pandas / arrow, lambdas through
the process registry, CREATE FUNCTION from a module), table functions (LATERAL TABLE,
LEFT JOIN LATERAL), aggregate functions (general with retraction, pandas)."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest
from harness import fold_changes

from planner.errors import SqlError
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.udf import AggregateFunction, DataTypes, ScalarFunction, udaf, udf, udtf

MODES = ["streaming", "batch"]
VALUES = "(VALUES ('a', 1, 'x,yy'), ('b', 2, 'zzz'), ('a', 3, CAST(NULL AS STRING))) AS t(k, v, s)"

MODULE = """
from streamsql.udf import udf, udtf, udaf, DataTypes, AggregateFunction

@udf(result_type=DataTypes.BIGINT())
def plus_one(x):
    return None if x is None else x + 1

@udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
def split_words(s):
    if s is not None:
        for w in s.split(","):
            yield w, len(w)
"""


def env_for(mode: str) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    return TableEnvironment.create(settings)


def final(env: TableEnvironment, query: str) -> Counter:
    """The final table of a query (retractions applied strictly, as the harness does)."""
    return fold_changes((row.get_row_kind().short_string(), tuple(row)) for row in env.execute_sql(query).collect())


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"udfmod_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.mark.parametrize("mode", MODES)
def test_scalar_udfs_of_every_kind(mode: str, module: str) -> None:
    env = env_for(mode)
    env.execute_sql(f"CREATE TEMPORARY FUNCTION plus_one AS '{module}.plus_one' LANGUAGE PYTHON")
    env.create_temporary_function("times10", udf(lambda x: x * 10, result_type=DataTypes.INT()))
    env.create_temporary_function(
        "vec_add", udf(lambda a, b: a + b, result_type=DataTypes.BIGINT(), func_type="pandas")
    )
    env.create_temporary_function(
        "arrow_len", udf(lambda s: __import__("pyarrow").compute.utf8_length(s), result_type="INT", func_type="arrow")
    )

    class Greeting(ScalarFunction):
        def eval(self, k: str) -> str:
            return f"hi {k}"

    env.create_temporary_system_function("greet", udf(Greeting(), result_type=DataTypes.STRING()))
    got = final(env, f"SELECT k, plus_one(v), times10(v), vec_add(v, v), arrow_len(k), greet(k) FROM {VALUES}")
    assert got == Counter({("a", 2, 10, 2, 1, "hi a"): 1, ("b", 3, 20, 4, 1, "hi b"): 1, ("a", 4, 30, 6, 1, "hi a"): 1})


@pytest.mark.parametrize("mode", MODES)
def test_table_functions(mode: str, module: str) -> None:
    env = env_for(mode)
    env.execute_sql(f"CREATE TEMPORARY FUNCTION split_words AS '{module}.split_words' LANGUAGE PYTHON")
    inner = final(env, f"SELECT k, w, n FROM {VALUES}, LATERAL TABLE(split_words(s)) AS T(w, n)")
    assert inner == Counter({("a", "x", 1): 1, ("a", "yy", 2): 1, ("b", "zzz", 3): 1})
    left = final(env, f"SELECT k, w FROM {VALUES} LEFT JOIN LATERAL TABLE(split_words(s)) AS T(w, n) ON TRUE")
    assert left == Counter({("a", "x"): 1, ("a", "yy"): 1, ("b", "zzz"): 1, ("a", None): 1})
    default_names = final(env, f"SELECT k, f0 FROM {VALUES} JOIN LATERAL TABLE(split_words(s)) ON TRUE WHERE v = 2")
    assert default_names == Counter({("b", "zzz"): 1})

    @udtf(result_types=DataTypes.INT())
    def upto(n: int) -> list[int]:
        return list(range(n))

    env.create_temporary_function("upto", upto)
    assert final(env, f"SELECT k, i FROM {VALUES}, LATERAL TABLE(upto(v)) AS T(i) WHERE k = 'b'") == Counter(
        {("b", 0): 1, ("b", 1): 1}
    )


class SumSquares(AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], v: int | None) -> None:
        if v is not None:
            acc[0] += v * v

    def retract(self, acc: list[int], v: int | None) -> None:
        if v is not None:
            acc[0] -= v * v

    def get_value(self, acc: list[int]) -> int:
        return acc[0]


@pytest.mark.parametrize("mode", MODES)
def test_aggregate_functions(mode: str) -> None:
    env = env_for(mode)
    env.create_temporary_function("sum_sq", udaf(SumSquares(), result_type=DataTypes.BIGINT()))
    env.create_temporary_function(
        "mean", udaf(lambda v: float(v.mean()), result_type=DataTypes.DOUBLE(), func_type="pandas")
    )
    got = final(env, f"SELECT k, sum_sq(v), mean(v) FROM {VALUES} GROUP BY k")
    assert got == Counter({("a", 10, 2.0): 1, ("b", 4, 2.0): 1})
    # Over an updating input the UDAF's retract() is used: counts per key are 2 and 1.
    nested = f"SELECT sum_sq(c), mean(c) FROM (SELECT k, COUNT(*) AS c FROM {VALUES} GROUP BY k)"
    assert final(env, nested) == Counter({(5, 1.5): 1})


def test_udaf_without_retract_fails_on_updating_input(tmp_path: Path) -> None:
    class Plain(AggregateFunction):
        def create_accumulator(self) -> list[int]:
            return [0]

        def accumulate(self, acc: list[int], v: int) -> None:
            acc[0] += v

        def get_value(self, acc: list[int]) -> int:
            return acc[0]

    csv = tmp_path / "kv.csv"
    csv.write_text("a,1\nb,2\na,3\n")
    env = env_for("streaming")
    env.get_config().set("table.exec.source.batch-rows", "1")
    env.execute_sql(f"CREATE TABLE kv (k STRING, v INT) WITH ('connector'='filesystem','path'='{csv}','format'='csv')")
    env.create_temporary_function("plain_sum", udaf(Plain(), result_type=DataTypes.BIGINT()))
    with pytest.raises(Exception, match="retract"):
        final(env, "SELECT plain_sum(c) FROM (SELECT k, COUNT(*) AS c FROM kv GROUP BY k)")
    env.create_temporary_function("sum_sq", udaf(SumSquares(), result_type=DataTypes.BIGINT()))
    # With retract(): a -> 1 then 2 (retract 1), b -> 1: 2*2 + 1*1.
    assert final(env, "SELECT sum_sq(c) FROM (SELECT k, COUNT(*) AS c FROM kv GROUP BY k)") == Counter({(5,): 1})


def test_create_drop_and_errors(module: str) -> None:
    env = env_for("batch")
    env.execute_sql(f"CREATE TEMPORARY FUNCTION IF NOT EXISTS plus_one AS '{module}.plus_one' LANGUAGE PYTHON")
    env.execute_sql(f"CREATE TEMPORARY FUNCTION IF NOT EXISTS plus_one AS '{module}.plus_one' LANGUAGE PYTHON")
    assert "plus_one" in env.list_user_defined_functions()
    with pytest.raises(SqlError, match="already exists"):
        env.execute_sql(f"CREATE TEMPORARY FUNCTION plus_one AS '{module}.plus_one' LANGUAGE PYTHON")
    with pytest.raises(SqlError, match="LANGUAGE PYTHON"):
        env.execute_sql("CREATE FUNCTION j AS 'com.example.Fn'")
    with pytest.raises(SqlError, match="Cannot instantiate"):
        env.execute_sql("CREATE FUNCTION nope AS 'no_such_module_xyz.f' LANGUAGE PYTHON")
    env.execute_sql("DROP TEMPORARY FUNCTION plus_one")
    with pytest.raises(SqlError, match="No match found for function signature"):
        env.execute_sql("SELECT plus_one(1)")
    env.execute_sql("DROP TEMPORARY FUNCTION IF EXISTS plus_one")
    with pytest.raises(SqlError, match="doesn't exist"):
        env.execute_sql("DROP TEMPORARY FUNCTION plus_one")


def test_builtin_wins_unless_system_function() -> None:
    env = env_for("batch")
    env.create_temporary_function("upper", udf(lambda s: "udf", result_type=DataTypes.STRING()))
    assert final(env, "SELECT UPPER('x')") == Counter({("X",): 1})
    env.create_temporary_system_function("upper", udf(lambda s: "udf", result_type=DataTypes.STRING()))
    assert final(env, "SELECT UPPER('x')") == Counter({("udf",): 1})
    assert env.drop_temporary_system_function("upper")
    assert final(env, "SELECT UPPER('x')") == Counter({("X",): 1})


def test_explain_names_the_function() -> None:
    env = env_for("streaming")
    env.create_temporary_function("times10", udf(lambda x: x * 10, result_type=DataTypes.INT()))
    text = env.explain_sql(f"SELECT times10(v) FROM {VALUES}")
    assert "times10(v)" in text


@pytest.mark.parametrize("mode", MODES)
def test_udaf_in_a_window_aggregate(tmp_path: Path, mode: str) -> None:
    csv = tmp_path / "w.csv"
    csv.write_text("2024-01-01 00:00:01.000,2\n2024-01-01 00:00:02.000,3\n2024-01-01 00:00:11.000,4\n")
    env = env_for(mode)
    env.execute_sql(
        "CREATE TABLE w (ts TIMESTAMP(3), v INT, WATERMARK FOR ts AS ts) "
        f"WITH ('connector'='filesystem','path'='{csv}','format'='csv')"
    )
    env.create_temporary_function("sum_sq", udaf(SumSquares(), result_type=DataTypes.BIGINT()))
    q = (
        "SELECT window_start, sum_sq(v) FROM TABLE(TUMBLE(TABLE w, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end"
    )
    assert sorted(r[1] for r in final(env, q)) == [13, 16]
