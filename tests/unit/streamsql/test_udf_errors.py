"""A user's Python function that raises fails the job with a UserFunctionError (a JobError)
naming the function and what it was doing, showing the user's own traceback lines (this
file's, not streamsql's), with the original exception as `__cause__`: for every kind of
function (scalar, pandas, async, table, aggregate, pandas aggregate, table aggregate) and
for `open()`; streamsql's own errors about a function's output keep their message."""

from __future__ import annotations

import os
from typing import Any

import pytest

from runtime.errors import JobError, UserFunctionError
from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.expressions import col
from streamsql.udf import (
    AggregateFunction,
    AsyncScalarFunction,
    ScalarFunction,
    TableAggregateFunction,
    TableFunction,
    udaf,
    udf,
    udtaf,
    udtf,
)

THIS_FILE = os.path.abspath(__file__)
STREAMSQL_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(THIS_FILE)))), d) + os.sep
    for d in ("runtime", "planner", "streamsql")
)


@pytest.fixture
def env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, 'a'), (3, 'b')) AS t(x, k)")
    return env


def _fails(env: TableEnvironment, sql: str) -> UserFunctionError:
    with pytest.raises(UserFunctionError) as info:
        list(env.execute_sql(sql).collect())
    return info.value


def _check(e: UserFunctionError, name: str, doing: str, line_of: str) -> None:
    text = str(e)
    assert text.startswith(f"The Python function '{name}' failed {doing}: ValueError: no threes"), text
    assert isinstance(e.__cause__, ValueError)
    assert isinstance(e, JobError)
    assert e.function == name and e.cause_type == "ValueError"
    # the user's frame (this file, the line raising) and none of streamsql's
    line = next(i for i, t in enumerate(open(THIS_FILE).read().splitlines(), 1) if line_of in t)
    assert f'File "{THIS_FILE}", line {line}' in text, text
    assert not any(d in text for d in STREAMSQL_DIRS), text
    assert "internal error" not in text


def _no_threes(v: int) -> int:
    if v == 3:
        raise ValueError("no threes here")  # scalar-raise
    return v


def test_scalar_function_error_names_the_sql_name(env: TableEnvironment) -> None:
    env.create_temporary_function("sboom", udf(_no_threes, result_type=DataTypes.BIGINT()))
    e = _fails(env, "SELECT sboom(x) FROM v")
    _check(e, "sboom", "on a row", "# scalar-raise")


def test_pandas_function_error(env: TableEnvironment) -> None:
    def vec(s: Any) -> Any:
        if (s == 3).any():
            raise ValueError("no threes in this batch")  # pandas-raise
        return s

    env.create_temporary_function("vboom", udf(vec, result_type=DataTypes.BIGINT(), func_type="pandas"))
    e = _fails(env, "SELECT vboom(x) FROM v")
    _check(e, "vboom", "on a batch", "# pandas-raise")


class AsyncBoom(AsyncScalarFunction):
    async def eval(self, v: int) -> int:
        if v == 3:
            raise ValueError("no threes here")  # async-raise
        return v


def test_async_function_error(env: TableEnvironment) -> None:
    env.get_config().set("table.exec.async-scalar.retry-strategy", "NO_RETRY")
    env.create_temporary_function("aboom", udf(AsyncBoom(), result_type=DataTypes.BIGINT()))
    e = _fails(env, "SELECT aboom(x) FROM v")
    _check(e, "aboom", "on a row", "# async-raise")
    assert "asyncio" not in str(e)


class Explode(TableFunction):
    def eval(self, v: int):  # type: ignore[no-untyped-def]
        yield v
        if v == 3:
            raise ValueError("no threes here")  # table-raise


def test_table_function_error(env: TableEnvironment) -> None:
    env.create_temporary_function("explode", udtf(Explode(), result_types=[DataTypes.BIGINT()]))
    e = _fails(env, "SELECT y FROM v, LATERAL TABLE(explode(x)) AS s(y)")
    _check(e, "explode", "on a row", "# table-raise")


class Total(AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], v: int) -> None:
        if v == 3:
            raise ValueError("no threes here")  # aggregate-raise
        acc[0] += v

    def get_value(self, acc: list[int]) -> int:
        return acc[0]


def test_aggregate_function_error(env: TableEnvironment) -> None:
    total = udaf(Total(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
    env.create_temporary_function("total", total)
    e = _fails(env, "SELECT k, total(x) FROM v GROUP BY k")
    _check(e, "total", "on a row", "# aggregate-raise")
    assert ", in accumulate" in str(e)


def test_pandas_aggregate_function_error(env: TableEnvironment) -> None:
    def vtotal(s: Any) -> int:
        raise ValueError("no threes here")  # pandas-aggregate-raise

    env.create_temporary_function("vtotal", udaf(vtotal, result_type=DataTypes.BIGINT(), func_type="pandas"))
    e = _fails(env, "SELECT vtotal(x) FROM v")
    _check(e, "vtotal", "on a group", "# pandas-aggregate-raise")


class Top(TableAggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], v: int) -> None:
        acc[0] = max(acc[0], v)

    def emit_value(self, acc: list[int]):  # type: ignore[no-untyped-def]
        if acc[0] == 3:
            raise ValueError("no threes here")  # emit-raise
        yield acc[0]


def test_table_aggregate_function_error_from_the_table_api(env: TableEnvironment) -> None:
    top = udtaf(Top(), result_type=DataTypes.ROW([DataTypes.FIELD("m", DataTypes.BIGINT())]))
    with pytest.raises(UserFunctionError) as info:
        t = env.from_path("v").group_by(col("k")).flat_aggregate(top(col("x"))).select(col("*"))
        list(t.execute().collect())
    _check(info.value, "top", "emitting a result", "# emit-raise")


class Opens(ScalarFunction):
    def open(self, function_context: object) -> None:
        raise ValueError("no threes here")  # open-raise

    def eval(self, v: int) -> int:
        return v


def test_open_error(env: TableEnvironment) -> None:
    env.create_temporary_function("opens", udf(Opens(), result_type=DataTypes.BIGINT()))
    e = _fails(env, "SELECT opens(x) FROM v")
    _check(e, "opens", "in open()", "# open-raise")


def test_a_wrong_result_keeps_streamsql_s_own_message(env: TableEnvironment) -> None:
    env.create_temporary_function("wrong", udf(lambda v: "not a number", result_type=DataTypes.BIGINT()))
    with pytest.raises(JobError) as info:
        list(env.execute_sql("SELECT wrong(x) FROM v").collect())
    assert not isinstance(info.value, UserFunctionError)
    assert "returned values that are not BIGINT" in str(info.value)


class Closes(ScalarFunction):
    def eval(self, v: int) -> int:
        return v

    def close(self) -> None:
        raise ValueError("no threes here")  # close-raise


def test_close_error(env: TableEnvironment) -> None:
    env.create_temporary_function("closes", udf(Closes(), result_type=DataTypes.BIGINT()))
    e = _fails(env, "SELECT closes(x) FROM v")
    _check(e, "closes", "in close()", "# close-raise")


class Counted(ScalarFunction):
    def __init__(self) -> None:
        self.opened = 0

    def open(self, function_context: object) -> None:
        self.opened += 1

    def eval(self, v: int) -> int:
        return _no_threes(v)


def test_a_failing_function_is_restarted_like_any_job_failure_then_reported(env: TableEnvironment) -> None:
    for k, v in {
        "restart-strategy.type": "fixed-delay",
        "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "1 ms",
    }.items():
        env.get_config().set(k, v)
    counted = Counted()
    env.create_temporary_function("counted", udf(counted, result_type=DataTypes.BIGINT()))
    e = _fails(env, "SELECT counted(x) FROM v")
    _check(e, "counted", "on a row", "# scalar-raise")
    assert counted.opened == 3  # the first attempt and two restarts


def test_a_module_that_raises_while_imported_is_named_with_its_line(
    env: TableEnvironment, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.errors import SqlValidationError

    (tmp_path / "broken_udfs_mod.py").write_text('X = 1\nraise RuntimeError("module broken")\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(SqlValidationError) as info:
        env.execute_sql("CREATE TEMPORARY FUNCTION b AS 'broken_udfs_mod.f' LANGUAGE PYTHON")
    text = str(info.value)
    assert "importing module 'broken_udfs_mod' failed: RuntimeError: module broken" in text
    assert f'File "{tmp_path / "broken_udfs_mod.py"}", line 2' in text
    assert "importlib" not in text


def test_a_table_function_s_wrong_values_keep_streamsql_s_own_message(env: TableEnvironment) -> None:
    def words(v: int):  # type: ignore[no-untyped-def]
        yield "not a number"

    env.create_temporary_function("words", udtf(words, result_types=[DataTypes.BIGINT()]))
    with pytest.raises(JobError) as info:
        list(env.execute_sql("SELECT y FROM v, LATERAL TABLE(words(x)) AS s(y)").collect())
    assert not isinstance(info.value, UserFunctionError)
    assert "Python function words produced values that are not BIGINT" in str(info.value)


def test_a_parallel_worker_s_function_error_arrives_with_its_message(env: TableEnvironment) -> None:
    env.get_config().set("parallelism.default", "2")
    total = udaf(Total(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
    env.create_temporary_function("total", total)
    e = _fails(env, "SELECT k, total(x) FROM v GROUP BY k")
    assert any("parallel worker" in n for n in getattr(e, "__notes__", [])), "ran in a worker process"
    assert str(e).startswith("The Python function 'total' failed on a row: ValueError: no threes here")
    line = next(i for i, t in enumerate(open(THIS_FILE).read().splitlines(), 1) if "# aggregate-raise" in t)
    assert f'File "{THIS_FILE}", line {line}' in str(e)
    assert e.function == "total" and e.cause_type == "ValueError"  # pickled across; the cause object is not


def test_a_permanent_function_whose_module_broke_since_is_a_validation_error(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from planner.errors import SqlValidationError

    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "later_broken_udfs.py"
    module.write_text(
        "from streamsql import DataTypes\nfrom streamsql.udf import udf\n\n"
        "@udf(result_type=DataTypes.BIGINT())\ndef f(v):\n    return v\n"
    )
    db = tmp_path / "catalog.db"
    first = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    first.execute_sql(f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{db}')")
    first.execute_sql("USE CATALOG shop")
    first.execute_sql("CREATE FUNCTION later AS 'later_broken_udfs.f' LANGUAGE PYTHON")
    module.write_text('raise RuntimeError("module broken")\n')
    monkeypatch.delitem(__import__("sys").modules, "later_broken_udfs")
    second = TableEnvironment.create(EnvironmentSettings.in_batch_mode())  # loads the function on first use
    second.execute_sql(f"CREATE CATALOG shop WITH ('type' = 'sqlite', 'path' = '{db}')")
    second.execute_sql("USE CATALOG shop")
    with pytest.raises(SqlValidationError) as info:
        list(second.execute_sql("SELECT later(1)").collect())
    text = str(info.value)
    assert "Cannot instantiate user-defined function 'later': importing module 'later_broken_udfs' failed" in text
    assert f'File "{module}", line 1' in text
