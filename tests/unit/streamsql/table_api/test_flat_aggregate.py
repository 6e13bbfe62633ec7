"""Table.flat_aggregate with Python table aggregate functions (udtaf), both modes."""

from __future__ import annotations

import pytest

from planner.errors import SqlValidationError
from streamsql import DataTypes, EnvironmentSettings, Row, TableEnvironment
from streamsql.expressions import col
from streamsql.udf import TableAggregateFunction, udf, udtaf


class Top2(TableAggregateFunction):
    def create_accumulator(self) -> list:
        return [None, None]

    def accumulate(self, acc: list, v: int | None) -> None:
        if v is None:
            return
        if acc[0] is None or v > acc[0]:
            acc[1], acc[0] = acc[0], v
        elif acc[1] is None or v > acc[1]:
            acc[1] = v

    def emit_value(self, acc: list):
        for i, v in enumerate(acc):
            if v is not None:
                yield Row(v, i + 1)


class RowCount(TableAggregateFunction):
    """Takes the whole row (flat_aggregate(f) without a call); retractable."""

    def create_accumulator(self) -> list:
        return [0, 0]

    def accumulate(self, acc: list, row: Row) -> None:
        acc[0] += 1
        acc[1] += row.x or 0

    def retract(self, acc: list, row: Row) -> None:
        acc[0] -= 1
        acc[1] -= row.x or 0

    def emit_value(self, acc: list):
        yield acc[0], acc[1]


TOP2 = udtaf(
    Top2(),
    result_type=DataTypes.ROW([DataTypes.FIELD("v", DataTypes.BIGINT()), DataTypes.FIELD("rnk", DataTypes.INT())]),
)
ROWCOUNT = udtaf(RowCount(), result_type="ROW<n BIGINT, total BIGINT>")
DATA = [("a", 1), ("a", 5), ("b", 2), ("a", 3), ("b", 7), ("b", None)]


def _sorted(table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.to_arrow().to_pylist())


@pytest.fixture(params=["streaming", "batch"])
def env(request: pytest.FixtureRequest) -> TableEnvironment:
    s = EnvironmentSettings.in_streaming_mode() if request.param == "streaming" else EnvironmentSettings.in_batch_mode()
    return TableEnvironment.create(s)


def test_grouped_flat_aggregate_top2(env: TableEnvironment) -> None:
    t = env.from_elements(DATA, ["k", "x"])
    r = t.group_by(col("k")).flat_aggregate(TOP2(col("x"))).select(col("k"), col("v"), col("rnk"))
    assert _sorted(r) == [("a", 3, 2), ("a", 5, 1), ("b", 2, 2), ("b", 7, 1)]
    assert r.get_schema().get_field_names() == ["k", "v", "rnk"]


def test_global_flat_aggregate_with_aliases(env: TableEnvironment) -> None:
    t = env.from_elements(DATA, ["k", "x"])
    r = t.flat_aggregate(TOP2(col("x")).alias("best", "pos")).select(col("best"), col("pos"))
    assert _sorted(r) == [(5, 2), (7, 1)]


def test_whole_row_argument(env: TableEnvironment) -> None:
    t = env.from_elements(DATA, ["k", "x"])
    r = t.group_by(col("k")).flat_aggregate(ROWCOUNT).select(col("*"))
    assert _sorted(r) == [("a", 3, 9), ("b", 3, 9)]


def test_streaming_retracts_previous_rows_of_a_key() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t1 = env.from_elements([("a", 1), ("a", 5), ("b", 2)], ["k", "x"])
    t2 = env.from_elements([("a", 7), ("c", 4)], ["k", "x"])
    r = t1.union_all(t2).group_by(col("k")).flat_aggregate(TOP2(col("x"))).select(col("*"))
    with r.execute().collect() as it:
        changes = [(row.get_row_kind().name, tuple(row)) for row in it]
    assert ("DELETE", ("a", 5, 1)) in changes and ("DELETE", ("a", 1, 2)) in changes
    assert changes.index(("DELETE", ("a", 5, 1))) < changes.index(("INSERT", ("a", 7, 1)))
    assert ("INSERT", ("a", 5, 2)) in changes
    assert _sorted(r) == [("a", 5, 2), ("a", 7, 1), ("b", 2, 1), ("c", 4, 1)]


def test_updating_input_uses_retract() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t1 = env.from_elements([("a", 1), ("a", 5), ("b", 2)], ["k", "x"])
    t2 = env.from_elements([("a", 4)], ["k", "x"])
    sums = t1.union_all(t2).group_by(col("k")).select(col("k"), col("x").sum.alias("x"))
    r = sums.flat_aggregate(ROWCOUNT)
    assert _sorted(r) == [(2, 12)]


def test_explain_shows_table_aggregate(env: TableEnvironment) -> None:
    t = env.from_elements(DATA, ["k", "x"])
    text = t.group_by(col("k")).flat_aggregate(TOP2(col("x"))).select(col("k"), col("v")).explain()
    assert "LogicalTableAggregate(group=[{0}]" in text
    assert "GroupTableAggregate(groupBy=[k], select=[k, top2(_a0)])" in text


def test_flat_aggregate_errors(env: TableEnvironment) -> None:
    t = env.from_elements(DATA, ["k", "x"])
    plain = udf(lambda x: x, result_type=DataTypes.BIGINT())
    with pytest.raises(SqlValidationError, match="table aggregate function"):
        t.flat_aggregate(plain(col("x")))
    with pytest.raises(SqlValidationError, match="2 columns but 1 aliases"):
        t.flat_aggregate(TOP2(col("x")).alias("only"))
    with pytest.raises(SqlValidationError, match="not found"):
        t.group_by(col("kk")).flat_aggregate(TOP2(col("x")))
    with pytest.raises(TypeError):
        udtaf(object(), result_type=DataTypes.BIGINT())
