"""Python functions' lifecycle (PyFlink's UserDefinedFunction): `open(FunctionContext)`
before the first call and `close()` once the job has ended, for scalar, table and
aggregate functions, in both modes; a restarted or later job opens them again."""

from __future__ import annotations

import pytest

from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.udf import AggregateFunction, ScalarFunction, TableFunction, udaf, udf, udtf

MODES = [EnvironmentSettings.in_streaming_mode(), EnvironmentSettings.in_batch_mode()]


class Lifecycle:
    def __init__(self) -> None:
        self.events: list[str] = []

    def open(self, function_context: object) -> None:
        self.events.append("open")

    def close(self) -> None:
        self.events.append("close")


class Plus(Lifecycle, ScalarFunction):
    def eval(self, x: int) -> int:
        self.events.append("eval") if "eval" not in self.events else None
        return x + 1


class Split(Lifecycle, TableFunction):
    def eval(self, x: int):  # type: ignore[no-untyped-def]
        yield x
        yield -x


class Total(Lifecycle, AggregateFunction):
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], x: int) -> None:
        acc[0] += x

    def get_value(self, acc: list[int]) -> int:
        return acc[0]


@pytest.mark.parametrize("settings", MODES)
def test_close_is_called_once_after_the_job(settings: EnvironmentSettings) -> None:
    env = TableEnvironment.create(settings)
    plus, split, total = Plus(), Split(), Total()
    env.create_temporary_function("add_one", udf(plus, result_type=DataTypes.INT()))
    env.create_temporary_function("mirror", udtf(split, result_types=[DataTypes.INT()]))
    env.create_temporary_function(
        "my_total", udaf(total, result_type=DataTypes.INT(), accumulator_type=DataTypes.ARRAY(DataTypes.INT()))
    )
    env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1), (2), (3)) AS t(x)")
    rows = env.execute_sql("SELECT add_one(x) FROM v").collect()
    assert sorted(r[0] for r in rows) == [2, 3, 4]
    assert plus.events == ["open", "eval", "close"]
    rows = env.execute_sql("SELECT s FROM v, LATERAL TABLE(mirror(x)) AS T(s)").collect()
    assert sorted(r[0] for r in rows) == [-3, -2, -1, 1, 2, 3]
    assert split.events == ["open", "close"]
    rows = list(env.execute_sql("SELECT my_total(x) FROM v").collect())
    assert rows[-1][0] == 6
    assert total.events == ["open", "close"]
    list(env.execute_sql("SELECT add_one(x) FROM v").collect())  # a later job opens it again
    assert plus.events == ["open", "eval", "close", "open", "close"]


class Failing(Lifecycle, ScalarFunction):
    def eval(self, x: int) -> int:
        raise ValueError("boom")


def test_close_is_called_when_the_job_fails() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    failing = Failing()
    env.create_temporary_function("failing", udf(failing, result_type=DataTypes.INT()))
    with pytest.raises(Exception, match="boom"):
        list(env.execute_sql("SELECT failing(x) FROM (VALUES (1)) AS t(x)").collect())
    assert failing.events == ["open", "close"]
