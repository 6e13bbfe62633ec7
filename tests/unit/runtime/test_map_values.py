"""MAP values with a NULL key (Flink's `{NULL=1}`) through functions, CAST, printing,
TableResult, formats and Python UDFs; the MAP layout is runtime/map_values.py. The state
round trip is in tests/unit/runtime/checkpoint/test_operator_snapshots.py (`*_null_key_map`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from runtime.errors import JobError
from runtime.map_values import map_arrow_type, pairs, to_external
from runtime.types import INT, MAP, STRING
from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.udf import AggregateFunction, udaf, udf, udtf

NK = "MAP[CAST(NULL AS STRING), 1, 'a', 2]"


def _env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def _one(env: TableEnvironment, sql: str) -> tuple[object, ...]:
    (row,) = [tuple(r) for r in env.execute_sql(sql).collect()]
    return row


def test_layout_holds_a_null_key() -> None:
    t = MAP(STRING(), INT()).to_arrow()
    assert t == map_arrow_type(pa.string(), pa.int32())
    arr = pa.array([[(None, 1), ("a", 2)], None, []], t)
    assert [None if v is None else pairs(v) for v in arr.to_pylist()] == [[(None, 1), ("a", 2)], None, []]


def test_functions_and_cast_keep_the_null_key() -> None:
    row = _one(
        _env(),
        f"SELECT {NK}, CARDINALITY({NK}), MAP_KEYS({NK}), MAP_VALUES({NK}), {NK}['a'], "
        f"MAP_UNION({NK}, MAP['b', 3]), CAST({NK} AS MAP<STRING, BIGINT>), "
        "MAP[CAST(NULL AS STRING), 1, CAST(NULL AS STRING), 2], "
        "MAP_FROM_ARRAYS(ARRAY['x', CAST(NULL AS STRING)], ARRAY[1, 2])",
    )
    assert row == (
        [(None, 1), ("a", 2)],
        2,
        [None, "a"],
        [1, 2],
        2,
        [("b", 3), (None, 1), ("a", 2)],
        [(None, 1), ("a", 2)],
        [(None, 2)],  # one NULL key per map; the last value wins, as Java's map put
        [("x", 1), (None, 2)],
    )


def test_printing_shows_null_keys() -> None:
    out = io.StringIO()
    _env().execute_sql(f"SELECT {NK} AS m").print(out)
    assert "{NULL=1, a=2}" in out.getvalue()


def test_to_arrow_gives_arrow_maps_and_refuses_a_null_key() -> None:
    env = _env()
    table = env.execute_sql("SELECT MAP['a', 1] AS m").to_arrow()
    assert pa.types.is_map(table.schema.field("m").type)
    assert table.column("m").to_pylist() == [[("a", 1)]]
    with pytest.raises(JobError, match="column 'm'.*NULL key"):
        env.execute_sql(f"SELECT {NK} AS m").to_arrow()


def test_nested_maps_go_out_as_arrow_maps() -> None:
    t = DataTypes.ARRAY(DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))
    arr = pa.array([[[("a", 1)], None], None], t.to_arrow())
    out = to_external(arr, t, "here")
    assert out.type == pa.list_(pa.map_(pa.string(), pa.int32()))
    assert out.to_pylist() == [[[("a", 1)], None], None]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("DROP", {"a": 2}), ("LITERAL", {"nk": 1, "a": 2})],
)
def test_json_sink_map_null_key_modes(tmp_path: Path, mode: str, expected: dict[str, int]) -> None:
    env = _env()
    env.execute_sql(
        f"CREATE TABLE snk (m MAP<STRING, INT>) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        f"'format' = 'json', 'json.map-null-key.mode' = '{mode}', 'json.map-null-key.literal' = 'nk')"
    )
    env.execute_sql(f"INSERT INTO snk SELECT {NK}").wait()
    (line,) = [ln for f in tmp_path.rglob("*") if f.is_file() for ln in f.read_text().splitlines()]
    assert json.loads(line) == {"m": expected}


def test_json_sink_fails_on_a_null_key_by_default(tmp_path: Path) -> None:
    env = _env()
    env.execute_sql(
        f"CREATE TABLE snk (m MAP<STRING, INT>) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        "'format' = 'json')"
    )
    with pytest.raises(JobError, match="null keys"):
        env.execute_sql(f"INSERT INTO snk SELECT {NK}").wait()


def test_parquet_writes_maps_and_refuses_a_null_key(tmp_path: Path) -> None:
    env = _env()
    for name in ("ok", "bad"):
        env.execute_sql(
            f"CREATE TABLE {name} (id INT, m MAP<STRING, INT>) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / name}', 'format' = 'parquet')"
        )
    env.execute_sql(
        "INSERT INTO ok VALUES (1, MAP['a', 1, 'b', CAST(NULL AS INT)]), (2, CAST(NULL AS MAP<STRING, INT>))"
    ).wait()
    (path,) = [f for f in (tmp_path / "ok").rglob("*") if f.is_file() and not f.name.startswith(".")]
    assert pa.types.is_map(pq.read_schema(path).field("m").type)
    assert sorted(tuple(r) for r in env.execute_sql("SELECT id, m FROM ok").collect()) == [
        (1, [("a", 1), ("b", None)]),
        (2, None),
    ]
    with pytest.raises(JobError, match="Parquet.*NULL key"):
        env.execute_sql(f"INSERT INTO bad SELECT 1, {NK}").wait()


def test_python_udf_takes_and_returns_null_keys() -> None:
    env = _env()

    @udf(result_type=DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()))
    def flip(m: dict[str | None, int]) -> dict[str | None, int]:
        assert isinstance(m, dict)  # PyFlink passes a MAP as a dict
        return {k: v * 10 for k, v in m.items()}

    env.create_temporary_function("flip", flip)
    assert _one(env, f"SELECT flip({NK})") == ([(None, 10), ("a", 20)],)


def test_arrow_map_input_is_read_as_map() -> None:
    env = _env()
    data = pa.table({"m": pa.array([[("a", 1)], None], pa.map_(pa.string(), pa.int64()))})
    table = env.from_arrow(data)
    assert [tuple(r) for r in table.execute().collect()] == [([("a", 1)],), (None,)]


def test_python_table_function_emits_dict_maps() -> None:
    env = _env()

    @udtf(result_types=[DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())])
    def maps(n: int):  # noqa: ANN202 - a generator of rows
        yield ({None: n, "a": n + 1},)

    env.create_temporary_function("maps", maps)
    rows = [
        tuple(r)
        for r in env.execute_sql("SELECT m FROM (VALUES (1)) AS t(n), LATERAL TABLE(maps(n)) AS u(m)").collect()
    ]
    assert rows == [([(None, 1), ("a", 2)],)]


def test_python_aggregate_function_takes_and_returns_maps() -> None:
    env = _env()

    class Merge(AggregateFunction):
        def create_accumulator(self) -> dict[str | None, int]:
            return {}

        def accumulate(self, acc: dict[str | None, int], m: dict[str | None, int]) -> None:
            assert isinstance(m, dict)  # PyFlink passes a MAP as a dict
            for k, v in m.items():
                acc[k] = acc.get(k, 0) + v

        def get_value(self, acc: dict[str | None, int]) -> dict[str | None, int]:
            return acc

    mt = DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())
    env.create_temporary_function("merge_maps", udaf(Merge(), input_types=[mt], result_type=mt))
    sql = f"SELECT merge_maps(m) FROM (VALUES ({NK}), (MAP['a', 5])) AS t(m)"
    assert _one(env, sql) == ([(None, 1), ("a", 7)],)


def test_python_aggregate_function_without_input_types_gets_dicts() -> None:
    env = _env()
    seen: list[object] = []

    class Keys(AggregateFunction):
        def create_accumulator(self) -> list[object]:
            return []

        def accumulate(self, acc: list[object], m: dict[str | None, int], r: object) -> None:
            seen.append((m, r))
            acc.extend(sorted(m, key=str))

        def get_value(self, acc: list[object]) -> str:
            return ",".join(str(k) for k in acc)

    env.create_temporary_function("map_keys_of", udaf(Keys(), result_type=DataTypes.STRING()))
    sql = f"SELECT map_keys_of(m, r) FROM (VALUES ({NK}, ROW(MAP['x', 1], 2))) AS t(m, r)"
    assert _one(env, sql) == ("None,a",)
    ((m, r),) = seen
    assert m == {None: 1, "a": 2}
    # inside a ROW, a MAP is a dict as well, and the ROW a Row
    assert r[0] == {"x": 1} and r[1] == 2


def test_nested_maps_reach_python_functions_as_dicts() -> None:
    env = _env()
    got: list[object] = []

    @udf(result_type=DataTypes.INT())
    def probe(a: object, m: object) -> int:
        got.append((a, m))
        return 0

    env.create_temporary_function("probe", probe)
    _one(env, "SELECT probe(ARRAY[MAP['a', 1], MAP['b', 2]], MAP['o', MAP['i', 3]])")
    assert got == [([{"a": 1}, {"b": 2}], {"o": {"i": 3}})]


# Nested MAPs (in an ARRAY, a ROW, a MAP): each expectation is Flink 2.3.0's answer.


def test_nested_maps_print_as_flink_casts_them() -> None:
    row = _one(
        _env(),
        "SELECT CAST(ARRAY[MAP['a', 1], MAP['b', 2]] AS STRING), CAST(MAP['o', MAP['i', 3]] AS STRING), "
        "CAST(ROW(MAP['k', 1], 'x') AS STRING), CAST(MAP[CAST(NULL AS STRING), MAP['i', CAST(NULL AS INT)]] AS STRING), "
        "CAST(MAP[ARRAY[1, 2], ROW('a', MAP['z', TRUE])] AS STRING)",
    )
    assert row == ("[{a=1}, {b=2}]", "{o={i=3}}", "({k=1}, x)", "{NULL={i=NULL}}", "{[1, 2]=(a, {z=TRUE})}")


def test_nested_maps_through_functions() -> None:
    row = _one(
        _env(),
        "SELECT MAP['o', MAP['i', 3]]['o']['i'], ARRAY[MAP['a', 1], MAP['b', 2]][2]['b'], "
        "CAST(MAP_VALUES(MAP['o', MAP['i', 3], 'p', MAP['j', 4]]) AS STRING), CARDINALITY(MAP['o', MAP['i', 3]]['o']), "
        "CAST(MAP_ENTRIES(MAP['o', MAP['i', 3]]) AS STRING)",
    )
    assert row == (3, 2, "[{i=3}, {j=4}]", 1, "[(o, {i=3})]")


def test_maps_and_rows_of_different_element_types_mix() -> None:
    # Calcite's least restrictive type, element-wise (it was a validation error)
    row = _one(
        _env(),
        "SELECT TYPEOF(ARRAY[MAP['a', 1], MAP['bb', CAST(NULL AS INT)]]), "
        "CAST(ARRAY[MAP['a', 1], MAP['bb', CAST(NULL AS INT)]] AS STRING), "
        "TYPEOF(ARRAY[ROW(1, 'a'), ROW(CAST(NULL AS INT), 'bb')]), "
        "TYPEOF(COALESCE(MAP['a', MAP['x', 1]], MAP['b', MAP['y', CAST(NULL AS BIGINT)]]))",
    )
    assert row == (
        "ARRAY<MAP<VARCHAR(2) NOT NULL, INT> NOT NULL> NOT NULL",
        "[{a=1}, {bb=NULL}]",
        "ARRAY<ROW<`EXPR$0` INT, `EXPR$1` VARCHAR(2) NOT NULL> NOT NULL> NOT NULL",
        "MAP<CHAR(1) NOT NULL, MAP<CHAR(1) NOT NULL, BIGINT> NOT NULL> NOT NULL",
    )


def test_json_functions_write_nested_maps_as_objects_with_sorted_keys() -> None:
    row = _one(
        _env(),
        "SELECT JSON_STRING(MAP['z', 1, 'a', 2]), JSON_OBJECT('k' VALUE MAP['z', MAP['y', 1, 'b', 2], 'a', MAP['q', 0]]), "
        "JSON_STRING(CAST(ROW(1, MAP['y', 1, 'b', 2]) AS ROW<z INT, a MAP<STRING, INT>>)), "
        "JSON_ARRAY(ARRAY[MAP['z', 1, 'a', 2]], MAP['k', ARRAY[MAP['y', 1]]]), JSON_STRING(ARRAY[MAP['a', CAST(NULL AS INT)]])",
    )
    assert row == (
        '{"a":2,"z":1}',
        '{"k":{"a":{"q":0},"z":{"b":2,"y":1}}}',
        '{"a":{"b":2,"y":1},"z":1}',
        '[[{"a":2,"z":1}],{"k":[{"y":1}]}]',
        '[{"a":null}]',
    )


@pytest.mark.parametrize("inner", ["MAP[CAST(NULL AS STRING), 1]", "MAP['a', MAP[CAST(NULL AS STRING), 1]]"])
def test_json_functions_fail_on_a_null_key(inner: str) -> None:
    with pytest.raises(JobError, match="Key at index 0 was null"):
        _one(_env(), f"SELECT JSON_STRING({inner})")


def test_json_format_round_trips_nested_maps(tmp_path: Path) -> None:
    env = _env()
    env.execute_sql(
        "CREATE TABLE js (id INT, am ARRAY<MAP<STRING, INT>>, mm MAP<STRING, MAP<STRING, INT>>, "
        f"rm ROW<m MAP<STRING, INT>, s STRING>) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
        "'format' = 'json')"
    )
    env.execute_sql(
        "INSERT INTO js VALUES (1, ARRAY[MAP['a', 1], MAP['b', CAST(NULL AS INT)]], MAP['o', MAP['i', 3]], "
        "ROW(MAP['k', 1], 'x')), (2, CAST(NULL AS ARRAY<MAP<STRING, INT>>), MAP['p', CAST(NULL AS MAP<STRING, INT>)], "
        "ROW(CAST(NULL AS MAP<STRING, INT>), 'y'))"
    ).wait()
    lines = sorted(line for f in tmp_path.rglob("*") if f.is_file() for line in f.read_text().splitlines())
    # the bytes Flink 2.3's json format writes for these rows
    assert lines == [
        '{"id":1,"am":[{"a":1},{"b":null}],"mm":{"o":{"i":3}},"rm":{"m":{"k":1},"s":"x"}}',
        '{"id":2,"am":null,"mm":{"p":null},"rm":{"m":null,"s":"y"}}',
    ]
    rows = sorted(
        tuple(r)
        for r in env.execute_sql(
            "SELECT id, CAST(am AS STRING), CAST(mm AS STRING), CAST(rm AS STRING) FROM js"
        ).collect()
    )
    assert rows == [(1, "[{a=1}, {b=NULL}]", "{o={i=3}}", "({k=1}, x)"), (2, None, "{p=NULL}", "(NULL, y)")]


@pytest.mark.parametrize("column", ["m MAP<STRING, INT>", "am ARRAY<MAP<STRING, INT>>", "r ROW<m MAP<STRING, INT>>"])
def test_csv_format_refuses_maps_at_any_depth(tmp_path: Path, column: str) -> None:
    # Flink's csv format: "Unsupported type 'MAP<STRING, INT>'" / "Only simple types are supported
    # in the second level nesting"
    env = _env()
    env.execute_sql(
        f"CREATE TABLE c (id INT, {column}) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    _, typ = column.split(" ", 1)
    with pytest.raises(JobError, match="'csv' format does not support"):
        env.execute_sql(f"INSERT INTO c SELECT 1, CAST(NULL AS {typ})").wait()


def test_json_aggregates_write_maps_and_rows_as_objects() -> None:
    sql = (
        "SELECT JSON_ARRAYAGG(m), JSON_OBJECTAGG(KEY k VALUE r) FROM (VALUES ('x', MAP['z', 1, 'a', 2], ROW(1, 'p')), "
        "('y', MAP['b', 3], ROW(2, 'q'))) AS t(k, m, r)"
    )
    assert _one(_env(), sql) == (
        '[{"a":2,"z":1},{"b":3}]',
        '{"x":{"EXPR$0":1,"EXPR$1":"p"},"y":{"EXPR$0":2,"EXPR$1":"q"}}',
    )


def test_python_table_aggregate_function_gets_dicts() -> None:
    from streamsql.expressions import col
    from streamsql.udf import TableAggregateFunction, udtaf

    class Keys(TableAggregateFunction):
        def create_accumulator(self) -> list[object]:
            return []

        def accumulate(self, acc: list[object], m: dict[str | None, int]) -> None:
            assert isinstance(m, dict)  # PyFlink passes a MAP as a dict
            acc.extend(m)

        def emit_value(self, acc: list[object]):  # noqa: ANN201 - a generator of rows
            for k in sorted(acc, key=str):
                yield (str(k),)

    env = _env()
    t = env.sql_query(f"SELECT k, m FROM (VALUES ('g', {NK}), ('g', MAP['b', 3])) AS t(k, m)")
    keys = udtaf(Keys(), result_type="ROW<key STRING>")
    r = t.group_by(col("k")).flat_aggregate(keys(col("m"))).select(col("k"), col("key"))
    assert sorted(tuple(row) for row in r.execute().collect()) == [("g", "None"), ("g", "a"), ("g", "b")]
