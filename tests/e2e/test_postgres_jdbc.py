"""The 'jdbc' connector against a real PostgreSQL server (tests/servers/postgres.py):
scans (partitioned, at parallelism 2), lookup joins with the partial cache, the upsert and
append sinks, the type mapping, and the planning-time check of the declared table."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from clitools import run_cli
from servers.postgres import PostgresServer

from planner.errors import SqlError
from runtime.connectors.jdbc import JdbcSource
from runtime.graph import STREAMING, Node
from runtime.operators.base import OperatorContext, Output
from runtime.operators.lookup_join import LOOKUP_JOIN, LookupJoinOperator, LookupJoinParams
from runtime.types import BOOLEAN, INT, STRING, Field
from streamsql import EnvironmentSettings, TableEnvironment


def _with(pg: PostgresServer, table: str, extra: str = "") -> str:
    return f"'connector' = 'jdbc', 'url' = '{pg.jdbc_url}', 'table-name' = '{table}', 'username' = 'postgres'{extra}"


def _rows(env: TableEnvironment, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in env.execute_sql(sql).collect()), key=str)


@pytest.mark.parametrize(("mode", "auto_commit"), [("streaming", "true"), ("batch", "true"), ("batch", "false")])
def test_scan_maps_postgres_types(postgres_server: PostgresServer, mode: str, auto_commit: str) -> None:
    pg = postgres_server
    t = pg.new_name("types")
    pg.execute(
        f"CREATE TABLE {t} (id int PRIMARY KEY, s smallint, b bigint, r real, d double precision, "
        "n numeric(10,2), ok boolean, name text, v varchar(10), day date, tm time, ts timestamp, tz timestamptz, "
        "raw bytea, tags text[], nums int[], doc jsonb)"
    )
    pg.execute(
        f"INSERT INTO {t} VALUES (1, 2, 3, 1.5, 2.25, 12.34, true, 'a,\"b\"', '', '2024-02-29', '10:11:12.5', "
        "'2024-01-01 10:00:00.123456', '2024-01-01 10:00:00+02', '\\x0102', '{x,\"y z\",NULL}', '{1,2}', "
        "'{\"k\": 1}'), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL, NULL)"
    )
    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    extra = f", 'scan.auto-commit' = '{auto_commit}'"
    env.execute_sql(
        "CREATE TABLE t (id INT, s SMALLINT, b BIGINT, r FLOAT, d DOUBLE, n DECIMAL(10, 2), ok BOOLEAN, "
        "name STRING, v VARCHAR(10), `day` DATE, tm TIME(3), ts TIMESTAMP(6), tz TIMESTAMP_LTZ(3), raw BYTES, "
        f"tags ARRAY<STRING>, nums ARRAY<INT>, doc STRING) WITH ({_with(pg, t, extra)})"
    )
    rows = _rows(env, "SELECT * FROM t")
    assert rows[0] == (
        1, 2, 3, 1.5, 2.25, Decimal("12.34"), True, 'a,"b"', "", dt.date(2024, 2, 29), dt.time(10, 11, 12, 500000),
        dt.datetime(2024, 1, 1, 10, 0, 0, 123456), rows[0][12], b"\x01\x02", ["x", "y z", None], [1, 2],
        '{"k": 1}',
    )  # fmt: skip
    assert rows[0][12].astimezone(dt.UTC).replace(tzinfo=None) == dt.datetime(2024, 1, 1, 8, 0)
    assert rows[1] == (2, *([None] * 16))


def _reader_activity(pg: PostgresServer, table: str) -> list[tuple]:
    """(query, state) of the other sessions reading `table`."""
    return pg.execute(
        "SELECT query, state FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE %s",
        (f"%{table}%",),
    )


def test_scan_auto_commit_off_fetches_from_a_server_side_cursor(postgres_server: PostgresServer) -> None:
    """'scan.auto-commit' = false: a split is read in a transaction through a named cursor,
    'scan.fetch-size' rows per FETCH (seen by the server); true: one streamed COPY."""
    pg = postgres_server
    t = pg.new_name("cursor")
    pg.execute(f"CREATE TABLE {t} (id int, ok boolean, v text)")
    pg.execute(f"INSERT INTO {t} SELECT i, i % 2 = 0, 'v' || i FROM generate_series(1, 25) i")
    schema = (Field("id", INT()), Field("ok", BOOLEAN()), Field("v", STRING()))
    options = {"url": pg.jdbc_url, "table-name": t, "username": "postgres", "scan.fetch-size": "10"}

    reader = JdbcSource({**options, "scan.auto-commit": "false"}, schema, None).create_reader("0")
    first = reader.read(1000)
    assert first is not None and first.num_rows == 10
    ((query, state),) = _reader_activity(pg, "streamsql_scan_")
    assert query.startswith("FETCH FORWARD 10 FROM") and state == "idle in transaction"
    batches = [first]
    while (b := reader.read(1000)) is not None:
        batches.append(b)
    assert [b.num_rows for b in batches] == [10, 10, 5]
    assert reader.read(1000) is None
    cursor_rows = pa.Table.from_batches(batches).to_pylist()
    assert cursor_rows[:2] == [{"id": 1, "ok": False, "v": "v1"}, {"id": 2, "ok": True, "v": "v2"}]
    assert _reader_activity(pg, "streamsql_scan_") == []  # transaction and connection closed

    reader = JdbcSource(options, schema, None).create_reader("0")
    copied = [reader.read(1000)]
    assert _reader_activity(pg, "streamsql_scan_") == []
    assert any(q.startswith("COPY (SELECT") for q, _ in _reader_activity(pg, t))
    while (b := reader.read(1000)) is not None:
        copied.append(b)
    assert [b.num_rows for b in copied if b is not None] == [10, 10, 5]
    assert pa.Table.from_batches([b for b in copied if b is not None]).to_pylist() == cursor_rows


def test_declared_table_is_checked_at_planning(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    t = pg.new_name("chk")
    pg.execute(f"CREATE TABLE {t} (id int, name text)")
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(f"CREATE TABLE bad_type (id INT, name INT) WITH ({_with(pg, t)})")
    with pytest.raises(SqlError, match=r"Column 'name' .* declared INT but is text"):
        env.explain_sql("SELECT * FROM bad_type")
    env.execute_sql(f"CREATE TABLE bad_col (id INT, nom STRING) WITH ({_with(pg, t)})")
    with pytest.raises(SqlError, match="Column 'nom' .* does not exist"):
        env.explain_sql("SELECT * FROM bad_col")
    env.execute_sql(f"CREATE TABLE missing (id INT) WITH ({_with(pg, 'no_such_table')})")
    with pytest.raises(SqlError, match="Table 'no_such_table' does not exist"):
        env.explain_sql("SELECT * FROM missing")
    env.execute_sql(f"CREATE TABLE nokey (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ({_with(pg, t)})")
    with pytest.raises(SqlError, match="no PRIMARY KEY or UNIQUE index"):
        env.explain_sql("INSERT INTO nokey SELECT 1, 'a'")


def test_partitioned_scan_at_parallelism_2_equals_single_scan(postgres_server: PostgresServer, tmp_path: Path) -> None:
    pg = postgres_server
    src, one, two = pg.new_name("src"), pg.new_name("one"), pg.new_name("two")
    pg.execute(f"CREATE TABLE {src} (id int PRIMARY KEY, k int, v text)")
    pg.execute(f"INSERT INTO {src} SELECT i, i % 7, 'v' || i FROM generate_series(1, 5000) i")
    for out in (one, two):
        pg.execute(f"CREATE TABLE {out} (id int, k int, v text)")
    job = tmp_path / "job.sql"
    parts = (
        ", 'scan.partition.column' = 'id', 'scan.partition.num' = '5', "
        "'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '5000'"
    )
    job.write_text(
        f"CREATE TABLE s1 (id INT, k INT, v STRING) WITH ({_with(pg, src)});\n"
        f"CREATE TABLE s2 (id INT, k INT, v STRING) WITH ({_with(pg, src, parts)});\n"
        f"CREATE TABLE o1 (id INT, k INT, v STRING) WITH ({_with(pg, one)});\n"
        f"CREATE TABLE o2 (id INT, k INT, v STRING) WITH ({_with(pg, two)});\n"
        "EXECUTE STATEMENT SET BEGIN\n"
        "INSERT INTO o1 SELECT * FROM s1;\n"
        "INSERT INTO o2 SELECT * FROM s2;\n"
        "END;\n"
    )
    done = run_cli("-f", str(job), "--parallelism", "2")
    assert done.returncode == 0, done.stderr
    single = pg.execute(f"SELECT id, k, v FROM {one} ORDER BY id")
    assert len(single) == 5000
    assert pg.execute(f"SELECT id, k, v FROM {two} ORDER BY id") == single
    assert pg.execute(f"SELECT count(DISTINCT id) FROM {two}") == [(5000,)]


def test_upsert_and_append_sinks(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    agg, log = pg.new_name("agg"), pg.new_name("log")
    pg.execute(f"CREATE TABLE {agg} (k text PRIMARY KEY, c bigint, s numeric(20, 2))")
    pg.execute(f"INSERT INTO {agg} VALUES ('stale', 1, 1)")
    pg.execute(f"CREATE TABLE {log} (k text, v numeric(10, 2))")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE src (k STRING, v DECIMAL(10, 2)) WITH ('connector' = 'datagen', 'number-of-rows' = '500', "
        "'fields.k.length' = '1', 'fields.v.min' = '0', 'fields.v.max' = '100')"
    )
    env.execute_sql(
        f"CREATE TABLE a (k STRING, c BIGINT, s DECIMAL(20, 2), PRIMARY KEY (k) NOT ENFORCED) WITH ({_with(pg, agg)})"
    )
    env.execute_sql(f"CREATE TABLE l (k STRING, v DECIMAL(10, 2)) WITH ({_with(pg, log)})")
    stmts = env.create_statement_set()
    stmts.add_insert_sql("INSERT INTO a SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k")
    stmts.add_insert_sql("INSERT INTO l SELECT k, v FROM src")
    stmts.execute().wait()
    expected = pg.execute(f"SELECT k, count(*), sum(v) FROM {log} GROUP BY k ORDER BY k")
    assert pg.execute(f"SELECT count(*) FROM {log}") == [(500,)]
    got = pg.execute(f"SELECT k, c, s FROM {agg} WHERE k <> 'stale' ORDER BY k")
    assert got == expected
    # refused when planned, as Flink's JDBC sink refuses it (no row is written)
    with pytest.raises(SqlError, match="doesn't support consuming update changes") as info:
        env.execute_sql("INSERT INTO l SELECT k, CAST(COUNT(*) AS DECIMAL(10, 2)) FROM src GROUP BY k")
    assert "Table sink 'default_catalog.default_database.l'" in info.value.message
    assert "please declare primary key" in (info.value.hint or "")
    assert pg.execute(f"SELECT count(*) FROM {log}") == [(500,)]


def test_upsert_sink_at_its_own_parallelism(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """'sink.parallelism' = 2 in a parallelism-1 job: two writers (two transactions per
    checkpoint, seen as two transaction prefixes in the commit markers), the changes hashed
    on the PRIMARY KEY so each key's updates go through one writer in order."""
    pg = postgres_server
    agg, raw = pg.new_name("agg"), pg.new_name("raw")
    pg.execute(f"CREATE TABLE {agg} (k int PRIMARY KEY, c bigint, s bigint)")
    pg.execute(f"CREATE TABLE {raw} (k int, v bigint)")
    pg.execute(f"INSERT INTO {raw} SELECT i % 37, i FROM generate_series(1, 3000) i")
    pg.execute("CREATE TABLE IF NOT EXISTS _streamsql_commits (txn text PRIMARY KEY)")
    before = {t for (t,) in pg.execute("SELECT txn FROM _streamsql_commits")}
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("execution.checkpointing.interval", "50 ms")
    env.get_config().set("execution.checkpointing.dir", f"file://{tmp_path / 'cp'}")
    env.get_config().set("table.exec.source.batch-rows", "200")
    env.execute_sql(f"CREATE TABLE r (k INT, v BIGINT) WITH ({_with(pg, raw)})")
    two = ", 'sink.parallelism' = '2'"
    env.execute_sql(
        f"CREATE TABLE a (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH ({_with(pg, agg, two)})"
    )
    env.execute_sql("INSERT INTO a SELECT k, COUNT(*), SUM(v) FROM r GROUP BY k").wait()
    expected = pg.execute(f"SELECT k, count(*), sum(v) FROM {raw} GROUP BY k ORDER BY k")
    assert pg.execute(f"SELECT k, c, s FROM {agg} ORDER BY k") == expected
    new = {t for (t,) in pg.execute("SELECT txn FROM _streamsql_commits")} - before
    assert len({t.rsplit("-", 1)[0] for t in new}) == 2


def test_lookup_join_with_partial_cache(postgres_server: PostgresServer, tmp_path: Path) -> None:
    pg = postgres_server
    dim = pg.new_name("rates")
    pg.execute(f"CREATE TABLE {dim} (cur text PRIMARY KEY, rate int)")
    pg.execute(f"INSERT INTO {dim} VALUES ('USD', 90), ('EUR', 110)")
    (tmp_path / "orders.csv").write_text("".join(f"{i},{['USD', 'EUR', 'GBP'][i % 3]}\n" for i in range(300)))
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        f"CREATE TABLE o (id INT, cur STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'orders.csv'}', 'format' = 'csv')"
    )
    cache = ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100'"
    env.execute_sql(
        f"CREATE TABLE r (cur STRING, rate INT, PRIMARY KEY (cur) NOT ENFORCED) WITH ({_with(pg, dim, cache)})"
    )
    rows = _rows(env, "SELECT o.id, r.rate FROM o LEFT JOIN r FOR SYSTEM_TIME AS OF o.pt ON o.cur = r.cur")
    assert len(rows) == 300
    assert rows == sorted(((i, [90, 110, None][i % 3]) for i in range(300)), key=str)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _lookup_operator(options: dict[str, str], clock: _Clock) -> LookupJoinOperator:
    node = Node(
        id=1,
        operator=LOOKUP_JOIN.name,
        inputs=(0,),
        schema=(Field("id", INT()), Field("cur", STRING()), Field("cur0", STRING()), Field("rate", INT())),
        params=LookupJoinParams(
            kind="LEFT", table="r", connector="jdbc", options=options,
            physical_schema=(Field("cur", STRING()), Field("rate", INT())), projection=None, left_keys=(1,),
            right_keys=(0,), table_keys=(0,), right_projections=None, right_condition=None, condition=None,
            left_width=2,
        ),
    )  # fmt: skip
    op = LookupJoinOperator(node, OperatorContext(mode=STREAMING, config={}))
    op.cache.clock = clock
    op.open()
    return op


def _probe(op: LookupJoinOperator) -> list[tuple]:
    out = Output()
    batch = pa.RecordBatch.from_pydict({"id": pa.array([1, 2, 3, 4], pa.int32()), "cur": ["USD", "EUR", "USD", "X"]})
    op.process_batch(batch, 0, out)
    rows = pa.Table.from_batches(out.batches).select([0, 3]).to_pylist()
    return sorted(tuple(r.values()) for r in rows)


def test_changed_row_is_seen_after_the_cache_expires(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    dim = pg.new_name("dim")
    pg.execute(f"CREATE TABLE {dim} (cur text PRIMARY KEY, rate int)")
    pg.execute(f"INSERT INTO {dim} VALUES ('USD', 90), ('EUR', 110)")
    clock = _Clock()
    opts = {
        "url": pg.jdbc_url, "table-name": dim, "username": "postgres", "lookup.cache": "PARTIAL",
        "lookup.partial-cache.expire-after-write": "10 s",
    }  # fmt: skip
    op = _lookup_operator(opts, clock)
    assert _probe(op) == [(1, 90), (2, 110), (3, 90), (4, None)]
    assert op.source.queries == 1, "one query for the batch's keys, not one per row"
    pg.execute(f"UPDATE {dim} SET rate = rate + 1")
    pg.execute(f"INSERT INTO {dim} VALUES ('X', 7)")
    clock.now = 5.0
    assert _probe(op) == [(1, 90), (2, 110), (3, 90), (4, None)], "served from the cache (missing key too)"
    assert op.source.queries == 1
    clock.now = 10.5
    assert _probe(op) == [(1, 91), (2, 111), (3, 91), (4, 7)], "after expire-after-write the new rows are read"
    assert op.source.queries == 2
    op.close()


def test_lookup_join_on_two_keys_with_null_keys(postgres_server: PostgresServer, tmp_path: Path) -> None:
    pg = postgres_server
    dim = pg.new_name("dim2")
    pg.execute(f"CREATE TABLE {dim} (a int, b date, name text, PRIMARY KEY (a, b))")
    pg.execute(
        f"INSERT INTO {dim} VALUES (1, '2024-01-01', 'one'), (1, '2024-01-02', 'one-b'), (2, '2024-01-01', 'two')"
    )
    (tmp_path / "s.csv").write_text("1,1,2024-01-01\n2,1,2024-01-02\n3,2,2024-01-02\n4,,2024-01-01\n5,2,\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        f"CREATE TABLE s (id INT, a INT, b DATE, pt AS PROCTIME()) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 's.csv'}', 'format' = 'csv', 'csv.null-literal' = '')"
    )
    env.execute_sql(
        f"CREATE TABLE d (a INT, b DATE, name STRING, PRIMARY KEY (a, b) NOT ENFORCED) WITH ({_with(pg, dim)})"
    )
    rows = _rows(env, "SELECT s.id, d.name FROM s LEFT JOIN d FOR SYSTEM_TIME AS OF s.pt ON s.a = d.a AND s.b = d.b")
    assert rows == sorted([(1, "one"), (2, "one-b"), (3, None), (4, None), (5, None)], key=str)


def test_type_mapping_aliases_of_the_jdbc_page_round_trip(postgres_server: PostgresServer) -> None:
    """The PostgreSQL column of the jdbc page's type table, alias by alias: written by a
    Flink INSERT and read back."""
    pg = postgres_server
    t = pg.new_name("aliases")
    pg.execute(
        f"CREATE TABLE {t} (a int2, b smallserial, c serial, d bigserial, e float4, f float8, "
        "g numeric(5, 1), h character(3), i character varying(5), j time(3) without time zone, "
        "k timestamp(3) without time zone, l bytea, m integer[])"
    )
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE t (a SMALLINT, b SMALLINT, c INT, d BIGINT, e FLOAT, f DOUBLE, g DECIMAL(5, 1), h STRING, "
        f"i STRING, j TIME(3), k TIMESTAMP(3), l BYTES, m ARRAY<INT>) WITH ({_with(pg, t)})"
    )
    env.execute_sql(
        "INSERT INTO t VALUES (CAST(1 AS SMALLINT), CAST(2 AS SMALLINT), 3, CAST(4 AS BIGINT), CAST(0.5 AS FLOAT), "
        "0.25, 12.5, 'ab', 'abcde', TIME '10:11:12', TIMESTAMP '2024-02-29 23:59:59.999', X'0A0B', ARRAY[1, NULL])"
    ).wait()
    assert _rows(env, "SELECT * FROM t") == [
        (
            1,
            2,
            3,
            4,
            0.5,
            0.25,
            Decimal("12.5"),
            "ab ",
            "abcde",
            dt.time(10, 11, 12),
            dt.datetime(2024, 2, 29, 23, 59, 59, 999000),
            b"\x0a\x0b",
            [1, None],
        )
    ]
