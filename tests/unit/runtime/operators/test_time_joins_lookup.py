"""Lookup joins (processing-time FOR SYSTEM_TIME AS OF) against a filesystem table and a
DuckDB database file, and Flink's lookup cache behaviour."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from runtime.connectors.lookup import LookupCache, supports_lookup
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.lookup_join import LOOKUP_JOIN, LookupJoinOperator, LookupJoinParams
from runtime.types import INT, STRING, Field
from streamsql import EnvironmentSettings, TableEnvironment

ORDERS = "1,USD\n2,EUR\n3,GBP\n4,\n"


def _rows(env: TableEnvironment, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in env.execute_sql(sql).collect()), key=str)


def _env(mode: str, tmp: Path, dim_with: str) -> TableEnvironment:
    (tmp / "orders.csv").write_text(ORDERS)
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(
        f"CREATE TABLE o (id INT, cur STRING, pt AS PROCTIME()) WITH "
        f"('connector' = 'filesystem', 'path' = '{tmp / 'orders.csv'}', 'format' = 'csv')"
    )
    env.execute_sql(f"CREATE TABLE r (cur STRING, rate INT, PRIMARY KEY (cur) NOT ENFORCED) WITH ({dim_with})")
    return env


def _duckdb_file(tmp: Path) -> Path:
    db = tmp / "dim.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE rates (cur VARCHAR, rate INTEGER)")
    con.execute("INSERT INTO rates VALUES ('USD', 90), ('EUR', 110), ('EUR', 111)")
    con.close()
    return db


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_lookup_join_filesystem(tmp_path: Path, mode: str) -> None:
    (tmp_path / "r.csv").write_text("USD,90\nEUR,110\n")
    env = _env(
        mode,
        tmp_path,
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'r.csv'}', 'format' = 'csv', 'lookup.cache' = 'NONE'",
    )
    inner = _rows(env, "SELECT o.id, r.rate FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.cur = r.cur")
    assert inner == [(1, 90), (2, 110)]
    left = _rows(env, "SELECT o.id, r.rate FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.cur = r.cur")
    assert left == sorted([(1, 90), (2, 110), (3, None), (4, None)], key=str)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_lookup_join_duckdb(tmp_path: Path, mode: str) -> None:
    db = _duckdb_file(tmp_path)
    env = _env(mode, tmp_path, f"'connector' = 'duckdb', 'path' = '{db}', 'table-name' = 'rates'")
    rows = _rows(env, "SELECT o.id, r.rate FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.cur = r.cur AND r.rate > 100")
    assert rows == [(2, 110), (2, 111)]
    # The duckdb connector is also a plain scan source.
    assert _rows(env, "SELECT cur, rate FROM r WHERE rate < 100") == [("USD", 90)]


def test_filesystem_without_lookup_options_is_refused(tmp_path: Path) -> None:
    from planner.errors import SqlError

    (tmp_path / "r.csv").write_text("USD,90\n")
    env = _env("streaming", tmp_path, f"'connector' = 'filesystem', 'path' = '{tmp_path / 'r.csv'}', 'format' = 'csv'")
    with pytest.raises(SqlError, match="Processing-time temporal join is not supported yet"):
        _rows(env, "SELECT o.id, r.rate FROM o JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.cur = r.cur")
    assert not supports_lookup("filesystem", {"path": "x"})
    assert supports_lookup("filesystem", {"lookup.cache": "PARTIAL"})
    assert supports_lookup("duckdb", {})


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _operator(connector: str, options: dict[str, str], clock: _Clock) -> LookupJoinOperator:
    node = Node(
        id=1,
        operator=LOOKUP_JOIN.name,
        inputs=(0,),
        schema=(Field("id", INT()), Field("cur", STRING()), Field("cur0", STRING()), Field("rate", INT())),
        params=LookupJoinParams(
            kind="LEFT",
            table="r",
            connector=connector,
            options=options,
            physical_schema=(Field("cur", STRING()), Field("rate", INT())),
            projection=None,
            left_keys=(1,),
            right_keys=(0,),
            table_keys=(0,),
            right_projections=None,
            right_condition=None,
            condition=None,
            left_width=2,
        ),
    )
    op = LookupJoinOperator(node, OperatorContext(mode=STREAMING, config={}))
    op.cache.clock = clock
    op.open()
    return op


def _probe(op: LookupJoinOperator) -> list[tuple]:
    out = Output()
    batch = pa.RecordBatch.from_pydict({"id": pa.array([1, 2], pa.int32()), "cur": ["USD", "EUR"]})
    op.process_batch(batch, 0, out)
    rows = pa.Table.from_batches(out.batches).select([0, 3]).to_pylist()
    return sorted(tuple(r.values()) for r in rows)


def test_partial_cache_hides_file_changes_until_expiry(tmp_path: Path) -> None:
    dim = tmp_path / "r.csv"
    dim.write_text("USD,90\nEUR,110\n")
    clock = _Clock()
    opts = {
        "path": str(dim),
        "format": "csv",
        "lookup.cache": "PARTIAL",
        "lookup.partial-cache.expire-after-write": "10 s",
    }
    op = _operator("filesystem", opts, clock)
    assert _probe(op) == [(1, 90), (2, 110)]
    dim.write_text("USD,95\nEUR,120\nX,1\n")
    clock.now = 5.0
    assert _probe(op) == [(1, 90), (2, 110)], "cached rows are served until they expire"
    assert op.ctx.metrics.extra["lookup_cache_hits"] == 2
    clock.now = 10.5
    assert _probe(op) == [(1, 95), (2, 120)], "after expire-after-write the new file content is read"


def test_no_cache_sees_changes_at_once(tmp_path: Path) -> None:
    dim = tmp_path / "r.csv"
    dim.write_text("USD,90\n")
    op = _operator("filesystem", {"path": str(dim), "format": "csv", "lookup.cache": "NONE"}, _Clock())
    assert _probe(op) == [(1, 90), (2, None)]
    dim.write_text("USD,91\nEUR,7\n")
    assert _probe(op) == [(1, 91), (2, 7)]


def test_duckdb_partial_cache_and_missing_keys(tmp_path: Path) -> None:
    db = _duckdb_file(tmp_path)
    clock = _Clock()
    opts = {
        "path": str(db),
        "table-name": "rates",
        "lookup.cache": "PARTIAL",
        "lookup.partial-cache.expire-after-access": "1 s",
        "lookup.partial-cache.cache-missing-key": "false",
    }
    op = _operator("duckdb", opts, clock)
    op.cache.enabled = True
    assert _probe(op) == [(1, 90), (2, 110), (2, 111)]
    con = duckdb.connect(str(db))
    con.execute("UPDATE rates SET rate = 1")
    con.close()
    clock.now = 0.5
    assert _probe(op) == [(1, 90), (2, 110), (2, 111)]
    clock.now = 1.2  # accessed at 0.5: still fresh
    assert _probe(op) == [(1, 90), (2, 110), (2, 111)]
    clock.now = 3.0
    assert _probe(op) == [(1, 1), (2, 1), (2, 1)]


def test_cache_bounds_and_missing_keys() -> None:
    clock = _Clock()
    cache = LookupCache({"lookup.cache": "PARTIAL", "lookup.partial-cache.max-rows": "2"}, clock)
    empty = pa.table({"a": pa.array([], pa.int32())})
    for k in ("a", "b", "c"):
        cache.put((k,), empty)
    assert list(cache.entries) == [("b",), ("c",)], "least recently used key evicted"
    assert cache.get(("b",)) is not None and cache.get(("a",)) is None
    off = LookupCache({"lookup.partial-cache.cache-missing-key": "false", "lookup.cache": "PARTIAL"}, clock)
    off.put(("z",), empty)
    assert off.get(("z",)) is None
    assert LookupCache({}, clock).get(("a",)) is None  # NONE caches nothing
