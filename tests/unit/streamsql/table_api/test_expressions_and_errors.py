"""Expression families, errors with the SQL path's messages, and the environment's Table API."""

from __future__ import annotations

import datetime
import threading
import uuid
from decimal import Decimal

import pyarrow as pa
import pytest
from tapi_data import rows

from planner.errors import SqlValidationError
from runtime.connectors.memory import sink_batches
from streamsql import DataTypes, EnvironmentSettings, Schema, Table, TableDescriptor, TableEnvironment
from streamsql.expressions import (
    TimeIntervalUnit,
    and_,
    array,
    call,
    call_sql,
    col,
    if_then_else,
    lit,
    map_,
    not_,
    null_of,
    or_,
)
from streamsql.udf import AggregateFunction, udaf, udf, udtf
from streamsql.window import Over, Tumble


@pytest.fixture
def nums(env: TableEnvironment) -> Table:
    schema = DataTypes.ROW(
        [
            ("a", DataTypes.INT()),
            ("b", DataTypes.DOUBLE()),
            ("s", DataTypes.STRING()),
            ("d", DataTypes.DATE()),
            ("ts", DataTypes.TIMESTAMP(3)),
        ]
    )
    data = [
        (1, 2.5, " Hello ", datetime.date(2024, 3, 5), datetime.datetime(2024, 3, 5, 10, 30, 15)),
        (-4, None, "world", datetime.date(2023, 12, 31), datetime.datetime(2023, 12, 31, 23, 59, 59)),
    ]
    return env.from_elements(data, schema)


def one(t: Table, *exprs: object) -> list[tuple]:
    return rows(t.select(col("a"), *exprs))


def test_arithmetic_comparison_logic(nums: Table) -> None:
    a, b = col("a"), col("b")
    got = one(
        nums,
        (a + 1).alias("p"),
        (a - 1).alias("m"),
        (a * 3).alias("t"),
        (a / 2).alias("dv"),
        (a % 3).alias("md"),
        (-a).alias("ng"),
        (10 - a).alias("rs"),
        (a > 0).alias("gt"),
        (a <= 1).alias("le"),
        (a != 1).alias("ne"),
        ((a > 0) & (b > 2)).alias("and_"),
        ((a > 0) | b.is_null).alias("or_"),
        (~(b > 2)).alias("inv"),
        not_(a > 0).alias("nt"),
        and_(a > -10, a < 10, a != 0).alias("all3"),
        or_(a == 1, a == 2).alias("any2"),
    )
    assert got == [
        (-4, -3, -5, -12, -2, -1, 4, 14, False, True, True, False, True, True, True, True, False),
        (1, 2, 0, 3, 0, 1, -1, 9, True, True, False, True, True, False, False, True, True),
    ]


def test_predicates_cast_and_conditionals(nums: Table) -> None:
    a, b, s = col("a"), col("b"), col("s")
    got = one(
        nums,
        b.is_null.alias("n"),
        b.is_not_null.alias("nn"),
        a.between(0, 5).alias("bt"),
        a.not_between(0, 5).alias("nbt"),
        a.in_(1, 2, 3).alias("inl"),
        s.like("%ell%").alias("lk"),
        a.cast(DataTypes.STRING()).alias("c"),
        s.try_cast(DataTypes.INT()).alias("tc"),
        if_then_else(a > 0, "pos", "neg").alias("ite"),
        b.if_null(0.0).alias("ifn"),
        lit(None, DataTypes.INT()).is_null.alias("lnull"),
        null_of(DataTypes.STRING()).is_null.alias("nullof"),
        call_sql("a * 100").alias("sqltext"),
    )
    assert got == [
        (-4, True, False, False, True, False, False, "-4", None, "neg", 0.0, True, True, -400),
        (1, False, True, True, False, True, True, "1", None, "pos", 2.5, True, True, 100),
    ]


def test_string_functions(nums: Table) -> None:
    s = col("s")
    got = rows(
        nums.select(
            s.upper_case.alias("u"),
            s.lower_case.alias("l"),
            s.trim().alias("t"),
            s.char_length.alias("n"),
            s.trim().substring(2, 3).alias("sub"),
            s.trim().concat("!").alias("cc"),
            s.replace("o", "0").alias("r"),
            s.trim().lpad(7, "*").alias("lp"),
            call("upper", s).alias("byname"),
        )
    )
    assert got == [
        (" HELLO ", " hello ", "Hello", 7, "ell", "Hello!", " Hell0 ", "**Hello", " HELLO "),
        ("WORLD", "world", "world", 5, "orl", "world!", "w0rld", "**world", "WORLD"),
    ]


def test_temporal_and_math_functions(nums: Table) -> None:
    ts, d, b, a = col("ts"), col("d"), col("b"), col("a")
    got = one(
        nums,
        d.extract(TimeIntervalUnit.YEAR).alias("y"),
        ts.extract(TimeIntervalUnit.HOUR).alias("h"),
        (ts + lit(1).hours).alias("plus1h"),
        (ts - lit(30).seconds).alias("minus30s"),
        (d + lit(2).days).alias("d2"),
        a.abs.alias("ab"),
        b.floor().alias("f"),
        b.ceil().alias("c"),
        b.round(0).alias("r"),
        a.power(2).alias("pw"),
        lit(16).sqrt.alias("sq"),
    )
    assert got[1] == (
        1,
        2024,
        10,
        datetime.datetime(2024, 3, 5, 11, 30, 15),
        datetime.datetime(2024, 3, 5, 10, 29, 45),
        datetime.date(2024, 3, 7),
        1,
        2.0,
        3.0,
        3.0,
        1.0,
        4.0,
    )
    assert got[0][1:3] == (2023, 23)


def test_composite_literals(nums: Table) -> None:
    got = rows(
        nums.select(
            array(col("a"), 2).alias("arr"),
            array(col("a"), 2).at(1).alias("first"),
            map_("k", col("a")).alias("m"),
            lit(Decimal("1.50")).alias("dec"),
            lit(datetime.date(2024, 1, 2)).alias("dt"),
        )
    )
    assert got[0][0] == [-4, 2] and got[0][1] == -4 and got[0][2] == [("k", -4)]
    assert got[0][3] == Decimal("1.50") and got[0][4] == datetime.date(2024, 1, 2)


def test_python_udfs(env: TableEnvironment) -> None:
    t = env.from_elements([("a", "x,y", 1), ("b", "z", 2), ("a", "w", 3)], ["k", "s", "v"])

    @udf(result_type=DataTypes.BIGINT())
    def twice(x: int) -> int:
        return x * 2

    @udf(
        result_type=DataTypes.ROW([DataTypes.FIELD("n", DataTypes.BIGINT()), DataTypes.FIELD("u", DataTypes.STRING())])
    )
    def pair(v: int, s: str) -> tuple[int, str]:
        return v + 1, s.upper()

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def split(s: str):  # noqa: ANN202 - a generator
        for w in s.split(","):
            yield w, len(w)

    class Total(AggregateFunction):
        def create_accumulator(self) -> list[int]:
            return [0]

        def accumulate(self, acc: list[int], v: int) -> None:
            acc[0] += v

        def retract(self, acc: list[int], v: int) -> None:
            acc[0] -= v

        def get_value(self, acc: list[int]) -> int:
            return acc[0]

    total = udaf(Total(), result_type=DataTypes.BIGINT())
    assert twice(4) == 8  # plain values still call the function
    assert rows(t.select(twice(col("v")).alias("t2"))) == [(2,), (4,), (6,)]
    mapped = t.map(pair(col("v"), col("s")))
    assert mapped.get_schema().get_field_names() == ["n", "u"] and (2, "X,Y") in rows(mapped)
    assert sorted(rows(t.flat_map(split(col("s"))))) == [("w", 1), ("x", 1), ("y", 1), ("z", 1)]
    lateral = t.join_lateral(split(col("s")).alias("word", "len")).select(col("k"), col("word"))
    assert len(rows(lateral)) == 4
    left = t.left_outer_join_lateral(split(col("s")).alias("word", "len")).select(col("word"))
    assert len(rows(left)) == 4
    agg = t.group_by(col("k")).aggregate(total(col("v")).alias("tot")).select(col("k"), col("tot"))
    assert rows(agg) == [("a", 4), ("b", 2)]
    assert rows(t.group_by(col("k")).select(col("k"), total(col("v")).alias("x"))) == [("a", 4), ("b", 2)]


def test_misspelled_column_is_the_sql_error(env: TableEnvironment) -> None:
    t = env.from_elements([("alice", 1)], ["user_name", "n"])
    with pytest.raises(SqlValidationError) as e:
        t.select(col("usr_name"))
    assert "Column 'usr_name' not found" in str(e.value) and "Did you mean 'user_name'?" in str(e.value)
    env.create_temporary_view("u", t)
    with pytest.raises(SqlValidationError) as e_sql:
        env.sql_query("SELECT usr_name FROM u")
    assert str(e.value).split(":", 1)[1].split("\n")[0] == str(e_sql.value).split(":", 1)[1].split("\n")[0]
    with pytest.raises(SqlValidationError, match="Object 'nope' not found"):
        env.from_path("nope")


def test_other_errors(env: TableEnvironment) -> None:
    t = env.from_elements([("a", 1)], ["k", "v"])
    with pytest.raises(SqlValidationError, match="ambiguous names: k, v"):
        t.join(t)
    with pytest.raises(SqlValidationError, match="Column 'x' not found"):
        t.drop_columns(col("x"))
    with pytest.raises(SqlValidationError, match="must group by the window alias"):
        t.window(Tumble.over(lit(1).seconds).on(col("v")).alias("w")).group_by(col("k")).select(col("k"))
    with pytest.raises(SqlValidationError, match="alias 'w2' is not defined"):
        t.over_window(Over.order_by(col("v")).alias("w")).select(col("v").sum.over(col("w2")))
    with pytest.raises(SqlValidationError, match="only be applied to an aggregate"):
        _ = col("v").distinct
    with pytest.raises(TypeError, match="no truth value"):
        bool(col("v") > 1)


def test_descriptor_tables_and_inserts(env: TableEnvironment, tmp_path: object) -> None:
    run = uuid.uuid4().hex
    path = f"{tmp_path}/in.csv"
    with open(path, "w") as f:
        f.write("a,1,2024-01-01 00:00:01\nb,2,2024-01-01 00:00:02\n")
    schema = (
        Schema.new_builder()
        .column("k", DataTypes.STRING())
        .column("n", DataTypes.INT())
        .column("ts", DataTypes.TIMESTAMP(3))
        .column_by_expression("n2", "n * 2")
        .watermark("ts", "ts - INTERVAL '1' SECOND")
        .build()
    )
    env.create_temporary_table(
        "src", TableDescriptor.for_connector("filesystem").schema(schema).option("path", path).format("csv").build()
    )
    assert rows(env.from_path("src").select(col("k"), col("n2"))) == [("a", 2), ("b", 4)]
    sink_schema = Schema.new_builder().column("k", DataTypes.STRING()).column("n", DataTypes.INT()).build()
    env.create_temporary_table(
        "sink1",
        TableDescriptor.for_connector("memory").schema(sink_schema).option("table-id", f"t-sink1-{run}").build(),
    )
    env.from_path("src").select(col("k"), col("n")).execute_insert("sink1").wait()
    assert sum(b.num_rows for b in sink_batches(f"t-sink1-{run}")) == 2
    descriptor = (
        TableDescriptor.for_connector("memory").schema(sink_schema).option("table-id", f"t-sink2-{run}").build()
    )
    env.from_path("src").select(col("k"), col("n")).execute_insert(descriptor).wait()
    assert sum(b.num_rows for b in sink_batches(f"t-sink2-{run}")) == 2
    stmt_set = env.create_statement_set()
    stmt_set.add_insert_sql("INSERT INTO sink1 SELECT k, n FROM src WHERE n > 1")
    stmt_set.add_insert("sink1", env.from_path("src").select(col("k"), col("n")))
    assert "Sink" in stmt_set.explain()
    stmt_set.execute().wait()
    assert sum(b.num_rows for b in sink_batches(f"t-sink1-{run}")) == 5
    assert env.drop_temporary_table("src") is True and "src" not in env.list_tables()


def test_from_pandas_and_arrow(env: TableEnvironment) -> None:
    import pandas as pd

    df = pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", None]})
    assert rows(env.from_pandas(df)) == [(1, "a"), (2, "b"), (3, None)]
    assert env.from_pandas(df, ["p", "q"]).get_schema().get_field_names() == ["p", "q"]
    table = pa.table({"x": pa.array([1, 2], pa.int32()), "t": pa.array(["u", "v"])})
    from_arrow = env.from_arrow(table)
    assert [str(t) for t in from_arrow.get_schema().get_field_data_types()] == ["INT", "STRING"]
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    assert rows(env.from_arrow(reader).where(col("x") > 1)) == [(2, "v")]
    assert env.from_elements([1, 2]).get_schema().get_field_names() == ["_1"]
    df_out = env.from_pandas(df).to_pandas()
    assert list(df_out["x"]) == [1, 2, 3]


def test_collect_is_closable_and_repr_html() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql("CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100')")
    result = env.from_path("gen").execute()
    with result.collect() as it:
        first = next(it)
    assert isinstance(first[0], int) and result.stop_event is not None and result.stop_event.is_set()
    assert "unbounded" in env.from_path("gen")._repr_html_()
    bounded = env.from_elements([(i,) for i in range(30)], ["n"])
    html = bounded._repr_html_()
    assert html.count("<tr>") == 21 and "showing 20 of 30 rows" in html
    assert threading.active_count() < 50


def test_to_polars(env: TableEnvironment) -> None:
    polars = pytest.importorskip("polars")
    df = env.from_elements([(1, "a")], ["n", "s"]).to_polars()
    assert isinstance(df, polars.DataFrame) and df.shape == (1, 2)
