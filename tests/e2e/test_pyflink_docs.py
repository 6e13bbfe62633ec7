"""The examples of PyFlink's Python Table API pages, run with the documented import rule.

Each example is the page's code (PyFlink 2.x docs, docs/dev/python/...: Intro to the Python
Table API, Row-based Operations, General and Vectorized User-defined Functions, Conversions
between PyFlink Table and Pandas DataFrame, Metrics, TableEnvironment), written against
`pyflink.*` and rewritten by `rewrite_imports` (docs/table_api.md) before it runs in this
process. The expected output is what the page prints. Where a page's snippet cannot run as
written (it uses a table it never defines, or an import it forgot), the example adds that
and says so; where the page shows the output of an older Flink, the comment says what Flink
2.x prints and why.
"""

from __future__ import annotations

import contextlib
import io
import textwrap
from collections import Counter
from typing import Any

import pytest
from test_pyflink_programs import rewrite_imports


def run(source: str) -> tuple[str, dict[str, Any]]:
    """Run a PyFlink program (its imports rewritten); what it printed and its globals."""
    code = rewrite_imports(textwrap.dedent(source))
    assert "pyflink" not in code
    out = io.StringIO()
    scope: dict[str, Any] = {"__name__": "__pyflink_doc__"}
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<pyflink doc example>", "exec"), scope)  # noqa: S102 - the documented program
    return out.getvalue(), scope


def frame_lines(text: str) -> list[str]:
    """A printed pandas DataFrame, one line per row, whitespace normalized."""
    return [" ".join(line.split()) for line in text.strip().splitlines()]


def final_rows(changelog: list[str]) -> Counter[str]:
    """The rows a print sink's changelog (`+I[..]`, `-U[..]`, `+U[..]`, `-D[..]`) ends with."""
    rows: Counter[str] = Counter()
    for line in changelog:
        kind, row = line[:2], line[2:]
        rows[row] += 1 if kind in ("+I", "+U") else -1
    return +rows


# ---------------------------------------------------------------------------- Intro to the Python Table API
def test_intro_create_from_list() -> None:
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        env_settings = EnvironmentSettings.in_batch_mode()
        table_env = TableEnvironment.create(env_settings)
        table = table_env.from_elements([(1, 'Hi'), (2, 'Hello')])
        print(table.to_pandas())
        table = table_env.from_elements([(1, 'Hi'), (2, 'Hello')], ['id', 'data'])
        print(table.to_pandas())
        table_without_schema = table_env.from_elements([(1, 'Hi'), (2, 'Hello')], ['id', 'data'])
        default_type = table_without_schema.to_pandas()["id"].dtype
        print('By default the type of the "id" column is %s.' % default_type)
        from pyflink.table import DataTypes
        table = table_env.from_elements([(1, 'Hi'), (2, 'Hello')],
                                        DataTypes.ROW([DataTypes.FIELD("id", DataTypes.TINYINT()),
                                                       DataTypes.FIELD("data", DataTypes.STRING())]))
        type = table.to_pandas()["id"].dtype
        print('Now the type of the "id" column is %s.' % type)
        """
    )
    assert frame_lines(out) == [
        "_1 _2",
        "0 1 Hi",
        "1 2 Hello",
        "id data",
        "0 1 Hi",
        "1 2 Hello",
        'By default the type of the "id" column is int64.',
        'Now the type of the "id" column is int8.',
    ]


def test_intro_queries_and_pandas_map() -> None:
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        from pyflink.table import DataTypes
        from pyflink.table.udf import udf
        import pandas as pd
        env_settings = EnvironmentSettings.in_batch_mode()
        table_env = TableEnvironment.create(env_settings)
        orders = table_env.from_elements([('Jack', 'FRANCE', 10), ('Rose', 'ENGLAND', 30), ('Jack', 'FRANCE', 20)],
                                         ['name', 'country', 'revenue'])
        revenue = orders \\
            .select(orders.name, orders.country, orders.revenue) \\
            .where(orders.country == 'FRANCE') \\
            .group_by(orders.name) \\
            .select(orders.name, orders.revenue.sum.alias('rev_sum'))
        print(revenue.to_pandas())
        map_function = udf(lambda x: pd.concat([x.name, x.revenue * 10], axis=1),
                            result_type=DataTypes.ROW(
                                        [DataTypes.FIELD("name", DataTypes.STRING()),
                                         DataTypes.FIELD("revenue", DataTypes.BIGINT())]),
                            func_type="pandas")
        print(orders.map(map_function).alias('name', 'revenue').to_pandas())
        """
    )
    assert frame_lines(out) == [
        "name rev_sum",
        "0 Jack 30",
        "name revenue",
        "0 Jack 100",
        "1 Rose 300",
        "2 Jack 200",
    ]


def test_intro_sql_print_sink_and_sources() -> None:
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        env_settings = EnvironmentSettings.in_streaming_mode()
        table_env = TableEnvironment.create(env_settings)
        table_env.execute_sql(\"\"\"
            CREATE TABLE random_source (
                id BIGINT,
                data TINYINT
            ) WITH (
                'connector' = 'datagen',
                'fields.id.kind'='sequence',
                'fields.id.start'='1',
                'fields.id.end'='8',
                'fields.data.kind'='sequence',
                'fields.data.start'='4',
                'fields.data.end'='11'
            )
        \"\"\")
        table_env.execute_sql(\"\"\"
            CREATE TABLE print_sink (
                id BIGINT,
                data_sum TINYINT
            ) WITH (
                'connector' = 'print'
            )
        \"\"\")
        table_env.execute_sql(\"\"\"
            INSERT INTO print_sink
                SELECT id, sum(data) as data_sum FROM
                    (SELECT id / 2 as id, data FROM random_source)
                WHERE id > 1
                GROUP BY id
        \"\"\").wait()
        """
    )
    # The page shows the changelog of a parallel run (`6> -U(2,8)` ...); which updates a
    # run prints depends on how rows are batched, the rows it ends with do not.
    assert final_rows(out.splitlines()) == Counter({"[4, 11]": 1, "[2, 15]": 1, "[3, 19]": 1})
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        table_env.execute_sql(\"\"\"
            CREATE TABLE sql_source (
                id BIGINT,
                data TINYINT
            ) WITH (
                'connector' = 'datagen',
                'fields.id.kind'='sequence',
                'fields.id.start'='1',
                'fields.id.end'='4',
                'fields.data.kind'='sequence',
                'fields.data.start'='4',
                'fields.data.end'='7'
            )
        \"\"\")
        table = table_env.sql_query("SELECT * FROM sql_source")
        print(table.to_pandas())
        """
    )
    lines = frame_lines(out)
    assert lines[0] == "id data"
    # the page's run is parallel (rows 2, 1, 4, 3); the rows are the same
    assert sorted(line.split(maxsplit=1)[1] for line in lines[1:]) == ["1 4", "2 5", "3 6", "4 7"]


def test_intro_emit_results() -> None:
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        table_env.execute_sql(\"\"\"
            CREATE TABLE sink_table (
                id BIGINT,
                data VARCHAR
            ) WITH (
                'connector' = 'print'
            )
        \"\"\")
        table = table_env.from_elements([(1, 'Hi'), (2, 'Hello')], ['id', 'data'])
        table.execute_insert("sink_table").wait()
        table_env.create_temporary_view("simple_source", table)
        table_env.execute_sql(\"\"\"
            CREATE TABLE first_sink_table (
                id BIGINT,
                data VARCHAR
            ) WITH (
                'connector' = 'print'
            )
        \"\"\")
        table_env.execute_sql(\"\"\"
            CREATE TABLE second_sink_table (
                id BIGINT,
                data VARCHAR
            ) WITH (
                'connector' = 'print'
            )
        \"\"\")
        statement_set = table_env.create_statement_set()
        statement_set.add_insert("first_sink_table", table)
        statement_set.add_insert_sql("INSERT INTO second_sink_table SELECT * FROM simple_source")
        statement_set.execute().wait()
        """
    )
    # the page's lines carry the subtask (`6> +I(1,Hi)`, Flink 1.x's row text); Flink 2.x
    # prints `+I[1, Hi]`, and a parallelism-1 run no subtask prefix
    assert sorted(out.splitlines()) == ["+I[1, Hi]"] * 3 + ["+I[2, Hello]"] * 3


def test_intro_collect() -> None:
    _, scope = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        source = table_env.from_elements([(1, "Hi", "Hello"), (2, "Hello", "Hello")], ["a", "b", "c"])
        res = table_env.execute_sql("select a + 1, b, c from %s" % source)
        with res.collect() as results:
           rows = [result for result in results]
        """
    )
    assert [tuple(r) for r in scope["rows"]] == [(2, "Hi", "Hello"), (3, "Hello", "Hello")]


def test_intro_collect_prints_unnamed_rows() -> None:
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        source = table_env.from_elements([(1, "Hi", "Hello"), (2, "Hello", "Hello")], ["a", "b", "c"])
        res = table_env.execute_sql("select a + 1, b, c from %s" % source)
        with res.collect() as results:
           for result in results:
               print(result)
        """
    )
    assert out.splitlines() == ["<Row(2, 'Hi', 'Hello')>", "<Row(3, 'Hello', 'Hello')>"]
    _, scope = run(
        """
        from pyflink.common import Row
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        (row,) = table_env.execute_sql("SELECT 2 AS a, 'Hi' AS b").collect()
        """
    )
    row = scope["row"]
    # equal to PyFlink's unnamed Row of the same values and kind; 'in' looks at the values
    assert row == scope["Row"](2, "Hi") and "Hi" in row
    assert row.b == "Hi" and row["a"] == 2  # the names stay readable (beyond PyFlink)


# ---------------------------------------------------------------------------- Row-based Operations
ROW_OPS_SETUP = """
    from pyflink.common import Row
    from pyflink.table import EnvironmentSettings, TableEnvironment
    from pyflink.table.expressions import col
    from pyflink.table.types import DataTypes
    from pyflink.table.udf import udf
    env_settings = EnvironmentSettings.in_batch_mode()
    table_env = TableEnvironment.create(env_settings)
    table = table_env.from_elements([(1, 'Hi'), (2, 'Hello')], ['id', 'data'])
"""


def test_row_based_map() -> None:
    # (the page's snippet uses `udf` without importing it)
    out, _ = run(
        ROW_OPS_SETUP
        + """
    @udf(result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                   DataTypes.FIELD("data", DataTypes.STRING())]))
    def func1(id: int, data: str) -> Row:
        return Row(id, data * 2)
    print(table.map(func1(col('id'), col('data'))).to_pandas())

    @udf(result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                   DataTypes.FIELD("data", DataTypes.STRING())]))
    def func2(data: Row) -> Row:
        return Row(data[0], data[1] * 2)
    print(table.map(func2).alias('id', 'data').to_pandas())

    import pandas as pd
    @udf(result_type=DataTypes.ROW([DataTypes.FIELD("id", DataTypes.BIGINT()),
                                   DataTypes.FIELD("data", DataTypes.STRING())]),
                                   func_type='pandas')
    def func3(data: pd.DataFrame) -> pd.DataFrame:
        res = pd.concat([data.id, data.data * 2], axis=1)
        return res
    print(table.map(func3).alias('id', 'data').to_pandas())
    """
    )
    # The page prints func1's columns as `_c0 _c1` (Flink 1.x); Flink 2.x's map names them
    # after the ROW's fields (OperationTreeBuilder.map: DataTypeUtils.flattenToNames).
    assert frame_lines(out) == ["id data", "0 1 HiHi", "1 2 HelloHello"] * 3


def test_row_based_map_pandas_flattens_nested_rows() -> None:
    """PyFlink's test_map_with_pandas_udf: a ROW column's fields are columns of the
    DataFrame a bare pandas function gets."""
    _, scope = run(
        """
        from pyflink.common import Row
        from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
        from pyflink.table.udf import udf
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t = t_env.from_elements(
            [(1, Row(2, 3)), (2, Row(1, 3)), (1, Row(5, 4)), (1, Row(8, 6)), (2, Row(3, 4))],
            DataTypes.ROW(
                [DataTypes.FIELD("a", DataTypes.TINYINT()),
                 DataTypes.FIELD("b",
                                 DataTypes.ROW([DataTypes.FIELD("c", DataTypes.INT()),
                                                DataTypes.FIELD("d", DataTypes.INT())]))]))
        def func(x):
            import pandas as pd
            res = pd.concat([x.a, x.c + x.d], axis=1)
            return res
        def func2(x):
            return x * 2
        pandas_udf = udf(func,
                         result_type=DataTypes.ROW(
                             [DataTypes.FIELD("c", DataTypes.BIGINT()),
                              DataTypes.FIELD("d", DataTypes.BIGINT())]),
                         func_type='pandas')
        pandas_udf_2 = udf(func2,
                           result_type=DataTypes.ROW(
                               [DataTypes.FIELD("c", DataTypes.BIGINT()),
                                DataTypes.FIELD("d", DataTypes.BIGINT())]),
                           func_type='pandas')
        rows = [tuple(r) for r in t.map(pandas_udf).map(pandas_udf_2).execute().collect()]
        """
    )
    assert sorted(scope["rows"]) == sorted([(4, 8), (2, 10), (2, 28), (2, 18), (4, 14)])


def test_row_based_flat_map_and_join_lateral() -> None:
    out, _ = run(
        """
        from pyflink.common import Row
        from pyflink.table.udf import udtf
        from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
        env_settings = EnvironmentSettings.in_streaming_mode()
        table_env = TableEnvironment.create(env_settings)
        table = table_env.from_elements([(1, 'Hi,Flink'), (2, 'Hello')], ['id', 'data'])
        @udtf(result_types=[DataTypes.INT(), DataTypes.STRING()])
        def split(x: Row) -> Row:
            for s in x[1].split(","):
                yield x[0], s
        print(table.flat_map(split).to_pandas())
        print(table.join_lateral(split.alias('a', 'b')).to_pandas())
        """
    )
    assert frame_lines(out) == [
        "f0 f1",
        "0 1 Hi",
        "1 1 Flink",
        "2 2 Hello",
        "id data a b",
        "0 1 Hi,Flink 1 Hi",
        "1 1 Hi,Flink 1 Flink",
        "2 2 Hello 2 Hello",
    ]


def test_row_based_aggregate() -> None:
    out, _ = run(
        """
        from pyflink.common import Row
        from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
        from pyflink.table.expressions import col
        from pyflink.table.udf import AggregateFunction, udaf

        class CountAndSumAggregateFunction(AggregateFunction):

            def get_value(self, accumulator):
                return Row(accumulator[0], accumulator[1])

            def create_accumulator(self):
                return Row(0, 0)

            def accumulate(self, accumulator, *args):
                accumulator[0] += 1
                accumulator[1] += args[0][1]

            def retract(self, accumulator, *args):
                accumulator[0] -= 1
                accumulator[1] -= args[0][1]

            def merge(self, accumulator, accumulators):
                for other_acc in accumulators:
                    accumulator[0] += other_acc[0]
                    accumulator[1] += other_acc[1]

            def get_accumulator_type(self):
                return DataTypes.ROW(
                    [DataTypes.FIELD("a", DataTypes.BIGINT()),
                     DataTypes.FIELD("b", DataTypes.BIGINT())])

            def get_result_type(self):
                return DataTypes.ROW(
                    [DataTypes.FIELD("a", DataTypes.BIGINT()),
                     DataTypes.FIELD("b", DataTypes.BIGINT())])

        function = CountAndSumAggregateFunction()
        agg = udaf(function,
                   result_type=function.get_result_type(),
                   accumulator_type=function.get_accumulator_type(),
                   name=str(function.__class__.__name__))
        env_settings = EnvironmentSettings.in_streaming_mode()
        table_env = TableEnvironment.create(env_settings)
        t = table_env.from_elements([(1, 2), (2, 1), (1, 3)], ['a', 'b'])
        result = t.group_by(col('a')) \\
            .aggregate(agg.alias("c", "d")) \\
            .select(col('a'), col('c'), col('d'))
        print(result.to_pandas())

        env_settings = EnvironmentSettings.in_batch_mode()
        table_env = TableEnvironment.create(env_settings)
        t = table_env.from_elements([(1, 2), (2, 1), (1, 3)], ['a', 'b'])
        pandas_udaf = udaf(lambda pd: (pd.b.mean(), pd.b.max()),
                           result_type=DataTypes.ROW(
                               [DataTypes.FIELD("a", DataTypes.FLOAT()),
                                DataTypes.FIELD("b", DataTypes.INT())]),
                           func_type="pandas")
        print(t.aggregate(pandas_udaf.alias("a", "b")) \\
            .select(col('a'), col('b')).to_pandas())
        """
    )
    assert frame_lines(out) == ["a c d", "0 1 2 5", "1 2 1 1", "a b", "0 2.0 3"]


def test_row_based_flat_aggregate() -> None:
    out, _ = run(
        """
        from pyflink.common import Row
        from pyflink.table import DataTypes, TableEnvironment, EnvironmentSettings
        from pyflink.table.udf import udtaf, TableAggregateFunction

        class Top2(TableAggregateFunction):

            def emit_value(self, accumulator):
                yield Row(accumulator[0])
                yield Row(accumulator[1])

            def create_accumulator(self):
                return [None, None]

            def accumulate(self, accumulator, row):
                if row[0] is not None:
                    if accumulator[0] is None or row[0] > accumulator[0]:
                        accumulator[1] = accumulator[0]
                        accumulator[0] = row[0]
                    elif accumulator[1] is None or row[0] > accumulator[1]:
                        accumulator[1] = row[0]

            def get_accumulator_type(self):
                return DataTypes.ARRAY(DataTypes.BIGINT())

            def get_result_type(self):
                return DataTypes.ROW(
                    [DataTypes.FIELD("a", DataTypes.BIGINT())])

        env_settings = EnvironmentSettings.in_streaming_mode()
        table_env = TableEnvironment.create(env_settings)
        top2 = udtaf(Top2())
        t = table_env.from_elements([(1, 'Hi', 'Hello'),
                                      (3, 'Hi', 'hi'),
                                      (5, 'Hi2', 'hi'),
                                      (7, 'Hi', 'Hello'),
                                      (2, 'Hi', 'Hello')], ['a', 'b', 'c'])
        result = t.group_by(t.b).flat_aggregate(top2).select('*').to_pandas()
        print(result)
        """
    )
    lines = frame_lines(out)
    assert lines[0] == "b a"
    # the page lists the Hi2 group first; groups come in hash order
    assert sorted(line.split(maxsplit=1)[1] for line in lines[1:]) == ["Hi 3.0", "Hi 7.0", "Hi2 5.0", "Hi2 NaN"]


# ---------------------------------------------------------------------------- General User-defined Functions
def test_udf_definitions_and_table_functions() -> None:
    out, _ = run(
        """
        import functools
        from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
        from pyflink.table.expressions import call, col
        from pyflink.table.udf import udf, udtf, ScalarFunction, TableFunction
        table_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        my_table = table_env.from_elements([(1, 2), (3, 4)], ["a", "b"])

        class Add(ScalarFunction):
          def eval(self, i, j):
            return i + j

        class CallableAdd(object):
          def __call__(self, i, j):
            return i + j

        def partial_add(i, j, k):
          return i + j + k

        for add in (udf(Add(), result_type=DataTypes.BIGINT()),
                    udf(lambda i, j: i + j, result_type=DataTypes.BIGINT()),
                    udf(CallableAdd(), result_type=DataTypes.BIGINT()),
                    udf(functools.partial(partial_add, k=1), result_type=DataTypes.BIGINT())):
            table_env.create_temporary_function("add", add)
            print(my_table.select(call("add", my_table.a, my_table.b)).to_pandas().values.tolist(),
                  my_table.select(add(my_table.a, my_table.b)).to_pandas().values.tolist())
            table_env.drop_temporary_function("add")

        class Split(TableFunction):
            def eval(self, string):
                for s in string.split(" "):
                    yield s, len(s)

        words = table_env.from_elements([("hi there",)], ["a"])
        split = udtf(Split(), result_types=[DataTypes.STRING(), DataTypes.INT()])
        print(words.join_lateral(split(words.a).alias("word", "length")).to_pandas())

        @udtf(result_types=DataTypes.BIGINT())
        def generator_func(x):
              yield 1
              yield 2

        @udtf(result_types=DataTypes.BIGINT())
        def iterator_func(x):
              return range(5)

        @udtf(result_types=DataTypes.BIGINT())
        def iterable_func(x):
              result = [1, 2, 3]
              return result

        for f in (generator_func, iterator_func, iterable_func):
            print(words.join_lateral(f(words.a)).select(col("f0")).to_pandas()["f0"].tolist())
        """
    )
    assert out.splitlines()[:4] == ["[[3], [7]] [[3], [7]]"] * 3 + ["[[4], [8]] [[4], [8]]"]
    assert frame_lines("\n".join(out.splitlines()[4:7])) == ["a word length", "0 hi there hi 2", "1 hi there there 5"]
    assert out.splitlines()[7:] == ["[1, 2]", "[0, 1, 2, 3, 4]", "[1, 2, 3]"]


def test_udaf_registered_as_an_aggregate_function_object() -> None:
    """The page registers `WeightedAvg()` itself (no udaf wrapper), as PyFlink allows."""
    out, _ = run(
        """
        from pyflink.common import Row
        from pyflink.table import AggregateFunction, DataTypes, TableEnvironment, EnvironmentSettings
        from pyflink.table.expressions import call
        from pyflink.table.udf import udaf

        class WeightedAvg(AggregateFunction):

            def create_accumulator(self):
                return Row(0, 0)

            def get_value(self, accumulator):
                if accumulator[1] == 0:
                    return None
                else:
                    return accumulator[0] / accumulator[1]

            def accumulate(self, accumulator, value, weight):
                accumulator[0] += value * weight
                accumulator[1] += weight

            def retract(self, accumulator, value, weight):
                accumulator[0] -= value * weight
                accumulator[1] -= weight

            def get_result_type(self):
                return DataTypes.DOUBLE()

            def get_accumulator_type(self):
                return DataTypes.ROW([
                    DataTypes.FIELD("f0", DataTypes.BIGINT()),
                    DataTypes.FIELD("f1", DataTypes.BIGINT())])

        env_settings = EnvironmentSettings.in_streaming_mode()
        table_env = TableEnvironment.create(env_settings)
        weighted_avg = udaf(WeightedAvg())
        t = table_env.from_elements([(1, 2, "Lee"),
                                     (3, 4, "Jay"),
                                     (5, 6, "Jay"),
                                     (7, 8, "Lee")]).alias("value", "count", "name")
        print(t.group_by(t.name).select(t.name, weighted_avg(t.value, t.count).alias("avg")).to_pandas())
        table_env.create_temporary_function("weighted_avg", WeightedAvg())
        print(t.group_by(t.name).select(t.name, call("weighted_avg", t.value, t.count).alias("avg")).to_pandas())
        table_env.create_temporary_view("source", t)
        print(table_env.sql_query(
            "SELECT name, weighted_avg(`value`, `count`) AS avg FROM source GROUP BY name").to_pandas())
        """
    )
    # (the page declares BIGINT for a float result and prints nothing; DOUBLE shows the values)
    rows = [line for line in frame_lines(out) if not line.startswith("name")]
    assert sorted(r.split(maxsplit=1)[1] for r in rows) == ["Jay 4.2"] * 3 + ["Lee 5.8"] * 3


# ---------------------------------------------------------------------------- Vectorized User-defined Functions
VECTORIZED_SETUP = """
    import datetime, functools
    from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
    from pyflink.table.udf import udf, udaf, AggregateFunction
    from pyflink.table.expressions import col
    from pyflink.table import expressions as expr
    from pyflink.table.window import Tumble
    settings = EnvironmentSettings.in_batch_mode()
    table_env = TableEnvironment.create(settings)
    # the page's `my_table = ...  # [a: String, b: BigInt, c: BigInt]`, with a rowtime
    my_table = table_env.from_elements(
        [("a", 1, 10, datetime.datetime(2024, 1, 1, 0, 10)),
         ("a", 3, 20, datetime.datetime(2024, 1, 1, 0, 20)),
         ("b", 5, 30, datetime.datetime(2024, 1, 1, 1, 5))],
        DataTypes.ROW([DataTypes.FIELD("a", DataTypes.STRING()), DataTypes.FIELD("b", DataTypes.BIGINT()),
                       DataTypes.FIELD("c", DataTypes.BIGINT()), DataTypes.FIELD("rowtime", DataTypes.TIMESTAMP(3))]))
    table_env.create_temporary_view("MyTable", my_table)
"""


def test_vectorized_scalar_and_aggregate_functions() -> None:
    out, _ = run(
        VECTORIZED_SETUP
        + """
    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def add(i, j):
      return i + j
    print(my_table.select(add(my_table.b, my_table.b)).to_pandas()["EXPR$0"].tolist())
    table_env.create_temporary_function("add", add)
    print(table_env.sql_query("SELECT add(b, b) FROM MyTable").to_pandas()["EXPR$0"].tolist())

    @udaf(result_type=DataTypes.FLOAT(), func_type="pandas")
    def mean_udaf(v):
        return v.mean()
    print(my_table.group_by(my_table.a).select(my_table.a, mean_udaf(my_table.b).alias("m")).to_pandas()
          .sort_values("a").values.tolist())
    tumble_window = Tumble.over(expr.lit(1).hours) \\
                .on(expr.col("rowtime")) \\
                .alias("w")
    print(my_table.window(tumble_window) \\
        .group_by(col("w")) \\
        .select(col('w').start, col('w').end, mean_udaf(col('b')).alias("m")).to_pandas()["m"].tolist())
    table_env.create_temporary_function("mean_udaf", mean_udaf)
    print(table_env.sql_query(\"\"\"
        SELECT a,
            mean_udaf(b)
            over (PARTITION BY a ORDER BY rowtime
            ROWS BETWEEN UNBOUNDED preceding AND UNBOUNDED FOLLOWING) AS m
        FROM MyTable\"\"\").to_pandas().values.tolist())
    print(table_env.sql_query(\"\"\"
        SELECT a, mean_udaf(b) over (PARTITION BY a ORDER BY rowtime
            ROWS BETWEEN UNBOUNDED preceding AND CURRENT ROW) AS m FROM MyTable\"\"\").to_pandas().values.tolist())
    """
    )
    assert out.splitlines() == [
        "[2, 6, 10]",
        "[2, 6, 10]",
        "[['a', 2.0], ['b', 5.0]]",
        "[2.0, 5.0]",
        "[['a', 2.0], ['a', 2.0], ['b', 5.0]]",
        "[['a', 1.0], ['a', 2.0], ['b', 5.0]]",
    ]


def test_vectorized_aggregate_function_forms() -> None:
    _, scope = run(
        VECTORIZED_SETUP
        + """
    class MaxAdd(AggregateFunction):

        def open(self, function_context):
            mg = function_context.get_metric_group()
            self.counter = mg.add_group("key", "value").counter("my_counter")
            self.counter_sum = 0

        def get_value(self, accumulator):
            # counter
            self.counter.inc(10)
            self.counter_sum += 10
            return accumulator[0]

        def create_accumulator(self):
            return []

        def accumulate(self, accumulator, *args):
            result = 0
            for arg in args:
                result += arg.max()
            accumulator.append(result)

    forms = [udaf(MaxAdd(), result_type=DataTypes.BIGINT(), func_type="pandas")]

    @udaf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def max_add(i, j):
      return i.max() + j.max()
    forms.append(max_add)

    forms.append(udaf(lambda i, j: i.max() + j.max(), result_type=DataTypes.BIGINT(), func_type="pandas"))

    class CallableMaxAdd(object):
      def __call__(self, i, j):
        return i.max() + j.max()
    forms.append(udaf(CallableMaxAdd(), result_type=DataTypes.BIGINT(), func_type="pandas"))

    def partial_max_add(i, j, k):
      return i.max() + j.max() + k
    forms.append(udaf(functools.partial(partial_max_add, k=1), result_type=DataTypes.BIGINT(), func_type="pandas"))

    results = [sorted(my_table.group_by(my_table.a).select(my_table.a, f(my_table.b, my_table.c).alias("m"))
                      .to_pandas().values.tolist()) for f in forms]
    """
    )
    assert scope["results"] == [[["a", 23], ["b", 35]]] * 4 + [[["a", 24], ["b", 36]]]
    assert scope["forms"][0].__wrapped__.counter_sum == 20  # one get_value per group


def test_pandas_function_gets_arrow_batch_size_rows() -> None:
    _, scope = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
        from pyflink.table.udf import udf
        from pyflink.table.expressions import col
        t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        t_env.get_config().set("python.fn-execution.arrow.batch.size", "3")
        sizes = []
        @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
        def length(v):
            sizes.append(len(v))
            return v * 0 + len(v)
        got = t_env.from_elements([(i,) for i in range(8)], ["v"]).select(length(col("v"))).to_pandas()
        """
    )
    assert scope["sizes"] == [3, 3, 2]
    assert scope["got"]["EXPR$0"].tolist() == [3, 3, 3, 3, 3, 3, 2, 2]


# ---------------------------------------------------------------------------- Conversions with pandas
def test_pandas_conversions() -> None:
    out, _ = run(
        """
        from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
        from pyflink.table.expressions import col
        import pandas as pd
        import numpy as np
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        pdf = pd.DataFrame(np.random.rand(1000, 2))
        table = t_env.from_pandas(pdf)
        print(table.get_schema().get_field_names())
        table = t_env.from_pandas(pdf, ['f0', 'f1'])
        print(table.get_schema().get_field_names())
        table = t_env.from_pandas(pdf, [DataTypes.DOUBLE(), DataTypes.DOUBLE()])
        print(table.get_schema().get_field_names())
        table = t_env.from_pandas(pdf,
                                  DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.DOUBLE()),
                                                 DataTypes.FIELD("f1", DataTypes.DOUBLE())]))
        print(table.get_schema())
        pdf = pd.DataFrame(np.random.rand(1000, 2))
        table = t_env.from_pandas(pdf, ["a", "b"]).filter(col('a') > 0.5)
        pdf = table.limit(100).to_pandas()
        print(len(pdf) <= 100, bool((pdf["a"] > 0.5).all()))
        """
    )
    assert out.splitlines() == [
        "['0', '1']",
        "['f0', 'f1']",
        "['0', '1']",
        "root",
        " |-- f0: DOUBLE",
        " |-- f1: DOUBLE",
        "",
        "True True",
    ]


def test_to_pandas_of_a_changelog_table() -> None:
    """`to_pandas()` of an updating table gives the rows it ends with (updates applied)."""
    out, _ = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment
        from pyflink.table.expressions import col
        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t = t_env.from_elements([("a", 1), ("b", 2), ("a", 3)], ["k", "v"])
        print(t.group_by(col("k")).select(col("k"), col("v").sum.alias("s")).to_pandas().sort_values("k"))
        """
    )
    assert frame_lines(out) == ["k s", "0 a 4", "1 b 2"]


# ---------------------------------------------------------------------------- Metrics, job parameters
def test_metrics_and_job_parameters() -> None:
    _, scope = run(
        """
        from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
        from pyflink.table.udf import ScalarFunction, udf
        from pyflink.table.expressions import col

        class MyUDF(ScalarFunction):

            def __init__(self):
                self.counter = None

            def open(self, function_context):
                super().open(function_context)
                group = function_context.get_metric_group()
                self.counter = group.counter("my_counter")
                group.gauge("my_gauge", lambda : self.length)
                self.distribution = group.distribution("my_distribution")
                self.meter = group.meter("my_meter", time_span_in_seconds=120)
                self.scoped = group.add_group("my_metrics_key", "my_metrics_value").counter("my_counter")
                self.factor = int(function_context.get_job_parameter("hashcode_factor", "12"))

            def eval(self, i):
                self.counter.inc(i)
                self.length = i
                self.distribution.update(i)
                self.meter.mark_event(i)
                self.scoped.inc()
                return i * self.factor

        t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        t_env.get_config().set("pipeline.global-job-parameters", "hashcode_factor:31")
        my_udf = MyUDF()
        f = udf(my_udf, result_type=DataTypes.BIGINT())
        got = t_env.from_elements([(1,), (2,)], ["a"]).select(f(col("a")).alias("r")).to_pandas()["r"].tolist()

        t_env.get_config().set("python.metric.enabled", "false")
        class NoMetrics(ScalarFunction):
            def open(self, function_context):
                function_context.get_metric_group()
            def eval(self, i):
                return i
        try:
            t_env.from_elements([(1,)], ["a"]).select(udf(NoMetrics(), result_type=DataTypes.BIGINT())(col("a"))) \\
                .to_pandas()
            error = None
        except Exception as e:
            error = str(e)
        """
    )
    assert scope["got"] == [31, 62]
    udf_object = scope["my_udf"]
    assert udf_object.counter.get_count() == 3 and udf_object.meter.get_count() == 3
    assert udf_object.distribution.sum == 3 and udf_object.distribution.max == 2
    assert udf_object.scoped.get_count() == 2
    assert "Metric has not been enabled" in scope["error"] and "python.metric.enabled" in scope["error"]


# ---------------------------------------------------------------------------- TableEnvironment
def test_table_environment_configuration_and_dependencies(tmp_path: Any) -> None:
    (tmp_path / "doc_dep_module.py").write_text("def helper(x):\n    return x * 2\n")
    _, scope = run(
        f"""
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        table_env.get_config().get_configuration().set_string("parallelism.default", "8")
        table_env.get_config().get_configuration().set_string("restart-strategy", "fixed-delay")
        table_env.get_config().get_configuration().set_string("restart-strategy.fixed-delay.attempts", "3")
        table_env.get_config().get_configuration().set_string("restart-strategy.fixed-delay.delay", "30s")
        table_env.get_config().get_configuration().set_string("execution.checkpointing.mode", "EXACTLY_ONCE")
        table_env.get_config().get_configuration().set_string("execution.checkpointing.interval", "3min")
        table_env.get_config().get_configuration().set_string("python.fn-execution.bundle.size", "2")
        table_env.get_config().get_configuration().set_string("python.state.cache-size", "2")
        table_env.add_python_file({str(tmp_path / "doc_dep_module.py")!r})
        import doc_dep_module
        helped = doc_dep_module.helper(21)
        parallelism = table_env.get_config().get("parallelism.default", None)
        schema = str(table_env.execute_sql("SELECT 1 AS one").get_table_schema())
        """
    )
    assert scope["helped"] == 42 and scope["parallelism"] == "8"
    assert scope["schema"] == "root\n |-- one: INT NOT NULL\n"


def test_window_aggregate_with_window_properties() -> None:
    """PyFlink's test_window_aggregate_with_pandas_udaf (the Table API page's row-based
    window aggregate): the bare pandas function gets the rows of each window as a DataFrame,
    and the select after `aggregate` reads the window's rowtime."""
    _, scope = run(
        """
        import datetime
        from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
        from pyflink.table import expressions as expr
        from pyflink.table.expressions import col
        from pyflink.table.udf import udaf
        from pyflink.table.window import Tumble
        t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        t = t_env.from_elements(
            [
                (1, 2, 3, datetime.datetime(2018, 3, 11, 3, 10, 0, 0)),
                (3, 2, 4, datetime.datetime(2018, 3, 11, 3, 10, 0, 0)),
                (2, 1, 2, datetime.datetime(2018, 3, 11, 3, 10, 0, 0)),
                (1, 3, 1, datetime.datetime(2018, 3, 11, 3, 40, 0, 0)),
                (1, 8, 5, datetime.datetime(2018, 3, 11, 4, 20, 0, 0)),
                (2, 3, 6, datetime.datetime(2018, 3, 11, 3, 30, 0, 0))
            ],
            DataTypes.ROW(
                [DataTypes.FIELD("a", DataTypes.TINYINT()),
                 DataTypes.FIELD("b", DataTypes.SMALLINT()),
                 DataTypes.FIELD("c", DataTypes.INT()),
                 DataTypes.FIELD("rowtime", DataTypes.TIMESTAMP(3))]))
        pandas_udaf = udaf(lambda pd: (pd.b.mean(), pd.b.max()),
                           result_type=DataTypes.ROW(
                               [DataTypes.FIELD("a", DataTypes.FLOAT()),
                                DataTypes.FIELD("b", DataTypes.INT())]),
                           func_type="pandas")
        tumble_window = Tumble.over(expr.lit(1).hours) \\
            .on(expr.col("rowtime")) \\
            .alias("w")
        rows = [tuple(r) for r in t.select(t.b, t.rowtime) \\
            .window(tumble_window) \\
            .group_by(col("w")) \\
            .aggregate(pandas_udaf.alias("d", "e")) \\
            .select(col("w").rowtime, col("d"), col("e")).execute().collect()]
        """
    )
    # PyFlink's expected rows: +I[2018-03-11 03:59:59.999, 2.2, 3], +I[2018-03-11 04:59:59.999, 8.0, 8]
    got = sorted((str(ts), round(d, 4), e) for ts, d, e in scope["rows"])
    assert got == [("2018-03-11 03:59:59.999000", 2.2, 3), ("2018-03-11 04:59:59.999000", 8.0, 8)]


def test_general_aggregate_function_in_an_over_window() -> None:
    _, scope = run(
        """
        from pyflink.common import Row
        from pyflink.table import AggregateFunction, DataTypes, EnvironmentSettings, TableEnvironment
        class WeightedAvg(AggregateFunction):
            def create_accumulator(self):
                return Row(0, 0)
            def get_value(self, accumulator):
                return None if accumulator[1] == 0 else accumulator[0] / accumulator[1]
            def accumulate(self, accumulator, value, weight):
                accumulator[0] += value * weight
                accumulator[1] += weight
            def get_result_type(self):
                return DataTypes.DOUBLE()
        t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        t_env.execute_sql(\"\"\"CREATE TABLE src (k INT, v BIGINT, w BIGINT, ts AS TO_TIMESTAMP_LTZ(v * 1000, 3))
            WITH ('connector'='datagen', 'number-of-rows'='5', 'fields.k.kind'='sequence', 'fields.k.start'='1',
            'fields.k.end'='5', 'fields.v.kind'='sequence', 'fields.v.start'='1', 'fields.v.end'='5',
            'fields.w.kind'='sequence', 'fields.w.start'='1', 'fields.w.end'='5')\"\"\")
        t_env.create_temporary_function("wavg", WeightedAvg())
        rows = sorted(tuple(r) for r in t_env.execute_sql(
            "SELECT k % 2, v, wavg(v, w) OVER (PARTITION BY k % 2 ORDER BY ts "
            "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM src").collect())
        """
    )
    # odd k: v 1, 3, 5 -> 1, (1+9)/4, (9+25)/8; even k: v 2, 4 -> 2, (4+16)/6
    assert scope["rows"] == [(0, 2, 2.0), (0, 4, 20 / 6), (1, 1, 1.0), (1, 3, 2.5), (1, 5, 34 / 8)]


def test_dependency_keys_act_as_their_methods(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dependency Management page: `python.files` and `python.archives` in the configuration
    do what add_python_file / add_python_archive do (functions run in this process)."""
    import zipfile

    (tmp_path / "doc_udf_module.py").write_text(
        "from streamsql.udf import udf\nfrom streamsql import DataTypes\n\n"
        "@udf(result_type=DataTypes.BIGINT())\ndef twice(x):\n    return x * 2\n"
    )
    with zipfile.ZipFile(tmp_path / "py_env.zip", "w") as z:
        z.writestr("py_env/data/data.txt", "hello")
    monkeypatch.chdir(tmp_path)
    _, scope = run(
        f"""
        from pyflink.table import EnvironmentSettings, TableEnvironment
        table_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        table_env.get_config().set("python.files", {str(tmp_path / "doc_udf_module.py")!r})
        table_env.execute_sql("CREATE TEMPORARY FUNCTION twice AS 'doc_udf_module.twice' LANGUAGE PYTHON")
        doubled = [tuple(r) for r in table_env.execute_sql("SELECT twice(CAST(21 AS BIGINT))").collect()]
        table_env.get_config().set("python.archives", {str(tmp_path / "py_env.zip")!r} + "#myenv")
        with open("myenv/py_env/data/data.txt") as f:
            data = f.read()
        """
    )
    assert scope["doubled"] == [(42,)] and scope["data"] == "hello"


# ---------------------------------------------------------------------------- Table API Tutorial (word_count.py)
def test_tutorial_word_count_writes_canal_json_to_the_output_path(tmp_path: Any) -> None:
    # The tutorial's program (flink-python's examples/table/word_count.py) with a shorter
    # text: a streaming GROUP BY written with `--output` to a filesystem sink in canal-json.
    # Its DDL puts the path in unquoted ('path' = {}), so the caller passes it quoted.
    out_dir = tmp_path / "output"
    _, scope = run(
        f"""
        from pyflink.common import Row
        from pyflink.table import (EnvironmentSettings, TableEnvironment, DataTypes)
        from pyflink.table.expressions import lit, col
        from pyflink.table.udf import udtf

        word_count_data = ["To be, or not to be,--that is the question:--",
                           "To die,--to sleep,--", "To sleep! perchance to dream"]

        def word_count(input_path, output_path):
            t_env = TableEnvironment.create(EnvironmentSettings.new_instance().in_streaming_mode().build())
            t_env.get_config().get_configuration().set_string("parallelism.default", "1")
            tab = t_env.from_elements(map(lambda i: (i,), word_count_data),
                                      DataTypes.ROW([DataTypes.FIELD('line', DataTypes.STRING())]))
            t_env.execute_sql(\"\"\"
                CREATE TABLE sink (
                    word STRING,
                    `count` BIGINT
                ) WITH (
                    'connector' = 'filesystem',
                    'path' = {{}},
                    'format' = 'canal-json'
                )
            \"\"\".format(output_path))

            @udtf(result_types=[DataTypes.STRING()])
            def split(line: Row):
                for s in line[0].split():
                    yield s

            tab.flat_map(split).alias('word') \\
               .group_by(col('word')) \\
               .select(col('word'), lit(1).count) \\
               .execute_insert('sink') \\
               .wait()
            return t_env

        t_env = word_count(None, "'{out_dir}'")
        t_env.execute_sql(\"\"\"
            CREATE TABLE back (word STRING, `count` BIGINT)
            WITH ('connector' = 'filesystem', 'path' = '{out_dir}', 'format' = 'canal-json')
        \"\"\")
        with t_env.execute_sql("SELECT * FROM back").collect() as results:
            changes = [(r.get_row_kind().name, r[0], r[1]) for r in results]
        """
    )
    files = [p for p in out_dir.iterdir() if not p.name.startswith(".")]
    events = [line for p in files for line in p.read_text().splitlines()]
    assert events
    assert all(e.startswith('{"data":[{"word":') for e in events)
    assert all(e.endswith(('],"type":"INSERT"}', '],"type":"DELETE"}')) for e in events)
    table: Counter[tuple[str, int]] = Counter()
    for kind, word, count in scope["changes"]:
        table[(word, count)] += 1 if kind in ("INSERT", "UPDATE_AFTER") else -1
    words = " ".join(scope["word_count_data"]).split()
    assert +table == Counter({(w, n): 1 for w, n in Counter(words).items()})
