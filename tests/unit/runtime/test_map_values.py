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
