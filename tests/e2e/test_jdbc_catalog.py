"""The 'jdbc' catalog (Flink's JdbcCatalog for PostgreSQL, planner/catalog_jdbc.py) against the
real PostgreSQL the tests start (tests/servers/postgres.py): a database of its own with tables in
two schemas, seen through SHOW DATABASES / SHOW TABLES / DESCRIBE, read by a batch SELECT,
joined with a temporary table, written by an upserting INSERT, and the errors (DDL, unsupported
types, a wrong user, an unreachable server)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from servers.postgres import PostgresServer

from planner.errors import SqlError
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.catalog import JdbcCatalog, ObjectPath


@pytest.fixture(scope="module")
def shop(postgres_server: PostgresServer) -> Iterator[tuple[PostgresServer, str]]:
    """A database of this module's own: `public.orders` (every mapped type), `public.totals`
    (a primary key, for the upsert), `sales.items` (another schema), and a view (not a table)."""
    pg = postgres_server
    db = pg.new_name("shop")
    pg.execute(f"CREATE DATABASE {db}")
    statements = [
        "CREATE TABLE orders (id serial PRIMARY KEY, qty int2, big int8, price numeric(10,2), amount numeric, "
        "r float4, d float8, ok bool NOT NULL, code char(3), name varchar(20), note text, day date, "
        "at time(3), ts timestamp, ts3 timestamp(3), tz timestamptz, raw bytea, tags text[], nums int4[], "
        "uid uuid)",
        "INSERT INTO orders (qty, big, price, amount, r, d, ok, code, name, note, day, at, ts, ts3, tz, raw, tags, "
        "nums, uid) VALUES (2, 30, 12.50, 1.5, 0.5, 2.25, true, 'abc', 'apple', 'n', '2024-02-29', '10:11:12.5', "
        "'2024-01-01 10:00:00.123456', '2024-01-01 10:00:00.123', '2024-01-01 10:00:00+00', '\\x0102', "
        "'{x,y}', '{1,2}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), "
        "(3, 40, 7.25, NULL, NULL, NULL, false, NULL, 'pear', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
        "NULL, NULL)",
        "CREATE TABLE totals (name varchar(20), region text, total numeric(12,2), "
        "CONSTRAINT totals_pk PRIMARY KEY (region, name))",
        "INSERT INTO totals VALUES ('apple', 'eu', 1)",
        "CREATE SCHEMA sales",
        "CREATE TABLE sales.items (sku text PRIMARY KEY, title text)",
        "INSERT INTO sales.items VALUES ('a', 'Apple'), ('p', 'Pear')",
        "CREATE TABLE sales.docs (id int, body jsonb)",
        "CREATE VIEW order_names AS SELECT name FROM orders",
    ]
    import psycopg

    with psycopg.connect(f"postgresql://{pg.user}@{pg.host}:{pg.port}/{db}", autocommit=True) as con:
        for sql in statements:
            con.execute(sql)
    yield pg, db
    pg.execute(f"DROP DATABASE {db} WITH (FORCE)")


def _env(pg: PostgresServer, db: str, batch: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    env = TableEnvironment.create(settings)
    env.execute_sql(
        f"CREATE CATALOG mypg WITH ('type' = 'jdbc', 'default-database' = '{db}', 'username' = '{pg.user}', "
        f"'password' = 'unused', 'base-url' = 'jdbc:postgresql://{pg.host}:{pg.port}')"
    )
    env.execute_sql("USE CATALOG mypg")
    return env


def _rows(env: TableEnvironment, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in env.execute_sql(sql).collect()), key=str)


def test_databases_tables_and_describe(shop: tuple[PostgresServer, str]) -> None:
    pg, db = shop
    env = _env(pg, db)
    databases = [r[0] for r in _rows(env, "SHOW DATABASES")]
    assert db in databases and "postgres" in databases
    assert "template0" not in databases and "template1" not in databases
    assert _rows(env, "SHOW CURRENT DATABASE") == [(db,)]
    # every schema's base tables as schema.table; no view, no system schema
    assert _rows(env, "SHOW TABLES") == [("public.orders",), ("public.totals",), ("sales.docs",), ("sales.items",)]
    assert _rows(env, "SHOW VIEWS") == []
    described = [tuple(r) for r in env.execute_sql("DESCRIBE orders").collect()]
    assert [(r[0], r[1], r[2], r[3]) for r in described] == [
        ("id", "INT", False, "PRI(id)"),
        ("qty", "SMALLINT", True, ""),
        ("big", "BIGINT", True, ""),
        ("price", "DECIMAL(10, 2)", True, ""),
        ("amount", "DECIMAL(38, 18)", True, ""),
        ("r", "FLOAT", True, ""),
        ("d", "DOUBLE", True, ""),
        ("ok", "BOOLEAN", False, ""),
        ("code", "CHAR(3)", True, ""),
        ("name", "VARCHAR(20)", True, ""),
        ("note", "STRING", True, ""),
        ("day", "DATE", True, ""),
        ("at", "TIME(3)", True, ""),
        ("ts", "TIMESTAMP(6)", True, ""),
        ("ts3", "TIMESTAMP(3)", True, ""),
        ("tz", "TIMESTAMP_LTZ(6)", True, ""),
        ("raw", "BYTES", True, ""),
        ("tags", "ARRAY<STRING>", True, ""),
        ("nums", "ARRAY<INT>", True, ""),
        ("uid", "VARCHAR(36)", True, ""),
    ]
    # a composite key keeps PostgreSQL's order and name; the options are the jdbc connector's
    keys = {r[0]: r[3] for r in env.execute_sql("DESCRIBE mypg.`" + db + "`.`public.totals`").collect()}
    assert keys == {"name": "PRI(region, name)", "region": "PRI(region, name)", "total": ""}
    ddl = list(env.execute_sql("SHOW CREATE TABLE `sales.items`").collect())[0][0]
    assert "CONSTRAINT `items_pkey` PRIMARY KEY (`sku`) NOT ENFORCED" in ddl
    assert f"'url' = 'jdbc:postgresql://{pg.host}:{pg.port}/{db}'" in ddl
    assert "'table-name' = 'sales.items'" in ddl and "'connector' = 'jdbc'" in ddl


def test_select_in_every_spelling(shop: tuple[PostgresServer, str]) -> None:
    pg, db = shop
    env = _env(pg, db)
    rows = _rows(env, "SELECT id, qty, price, ok, code, name, day, at, ts, raw, tags, uid FROM orders WHERE qty = 2")
    assert rows == [
        (1, 2, Decimal("12.50"), True, "abc", "apple", dt.date(2024, 2, 29), dt.time(10, 11, 12, 500000),
         dt.datetime(2024, 1, 1, 10, 0, 0, 123456), b"\x01\x02", ["x", "y"], "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ]  # fmt: skip
    names = [("apple",), ("pear",)]
    assert _rows(env, "SELECT name FROM `public.orders`") == names
    assert _rows(env, f"SELECT name FROM `{db}`.orders") == names
    assert _rows(env, f"SELECT name FROM mypg.`{db}`.`public.orders`") == names
    # from another catalog, fully qualified; another schema
    env.execute_sql("USE CATALOG default_catalog")
    assert _rows(env, f"SELECT sku, title FROM mypg.`{db}`.`sales.items`") == [("a", "Apple"), ("p", "Pear")]
    # a streaming job reads the table as a bounded source, as Flink's jdbc source
    assert _rows(_env(pg, db, batch=False), "SELECT sku FROM `sales.items`") == [("a",), ("p",)]


def test_registered_from_python(shop: tuple[PostgresServer, str]) -> None:
    """PyFlink 1.x's JdbcCatalog(...) registers the same catalog; the Python catalog reads it."""
    pg, db = shop
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    base = f"jdbc:postgresql://{pg.host}:{pg.port}"
    env.register_catalog("mypg", JdbcCatalog("mypg", db, pg.user, "unused", base))
    catalog = env.get_catalog("mypg")
    assert catalog.get_default_database() == db
    assert "sales.items" in catalog.list_tables(db)
    assert catalog.database_exists(db) and not catalog.database_exists("template1")
    schema = catalog.get_table(ObjectPath(db, "sales.items")).get_unresolved_schema()
    assert [c.get_name() for c in schema.get_columns()] == ["sku", "title"]
    with pytest.raises(AttributeError, match="register the catalog first"):
        JdbcCatalog("x", db, pg.user, "unused", base).list_tables(db)


def test_join_with_a_temporary_table_and_upsert(shop: tuple[PostgresServer, str], tmp_path: Path) -> None:
    pg, db = shop
    env = _env(pg, db)
    (tmp_path / "regions.csv").write_text("apple,eu\npear,us\n")
    env.execute_sql(
        "CREATE TEMPORARY TABLE regions (name STRING, region STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path / 'regions.csv'}', 'format' = 'csv')"
    )
    query = (
        "SELECT o.name, r.region, CAST(SUM(o.price * o.qty) AS DECIMAL(12, 2)) AS total "
        "FROM orders AS o JOIN regions AS r ON o.name = r.name GROUP BY o.name, r.region"
    )
    assert _rows(env, query) == [("apple", "eu", Decimal("25.00")), ("pear", "us", Decimal("21.75"))]
    env.execute_sql(f"INSERT INTO mypg.`{db}`.`public.totals` {query}").wait()
    # ('apple', 'eu') existed: updated in place through the primary key; ('pear', 'us') inserted
    assert sorted(pg_rows(pg, db, "SELECT name, region, total FROM totals")) == [
        ("apple", "eu", Decimal("25.00")),
        ("pear", "us", Decimal("21.75")),
    ]


def test_lookup_join_on_a_catalog_table(shop: tuple[PostgresServer, str], tmp_path: Path) -> None:
    """A catalog table as the dimension of a processing-time lookup join (the jdbc connector's
    lookup source); a batch of keys that all miss gives no rows (an inner join) or NULLs."""
    pg, db = shop
    env = _env(pg, db, batch=False)
    (tmp_path / "o.csv").write_text("1,a\n2,zz\n")
    (tmp_path / "miss.csv").write_text("3,zz\n")
    for name in ("o", "miss"):
        env.execute_sql(
            f"CREATE TEMPORARY TABLE {name} (id INT, sku STRING, pt AS PROCTIME()) WITH ('connector' = 'filesystem', "
            f"'path' = '{tmp_path / (name + '.csv')}', 'format' = 'csv')"
        )
    join = "JOIN `sales.items` FOR SYSTEM_TIME AS OF o.pt AS i ON o.sku = i.sku"
    assert _rows(env, f"SELECT o.id, i.title FROM o LEFT {join}") == [(1, "Apple"), (2, None)]
    assert _rows(env, f"SELECT o.id, i.title FROM miss AS o {join}") == []


def pg_rows(pg: PostgresServer, db: str, sql: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(f"postgresql://{pg.user}@{pg.host}:{pg.port}/{db}") as con:
        return list(con.execute(sql).fetchall())


def _error(env: TableEnvironment, sql: str) -> SqlError:
    with pytest.raises(SqlError) as info:
        env.execute_sql(sql)
    return info.value


def test_ddl_is_refused_as_in_flink(
    shop: tuple[PostgresServer, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pg, db = shop
    (tmp_path / "jdbccat_udfs.py").write_text(
        "from streamsql.udf import udf\nfrom streamsql.types import DataTypes\n\n"
        "@udf(result_type=DataTypes.INT())\ndef one(v):\n    return 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    env = _env(pg, db)
    e = _error(env, "CREATE TABLE t (id INT) WITH ('connector' = 'datagen')")
    assert e.flink_class == "org.apache.flink.table.api.TableException"
    assert e.message == f"Could not execute CreateTable in path `mypg`.`{db}`.`t`"
    assert "UnsupportedOperationException" in (e.hint or "")
    assert _error(env, "DROP TABLE orders").message == f"Could not execute DropTable in path `mypg`.`{db}`.`orders`"
    assert "AlterTable" in _error(env, "ALTER TABLE orders SET ('k' = 'v')").message
    assert "CREATE DATABASE" in _error(env, "CREATE DATABASE other").message
    assert "CREATE CATALOG FUNCTION" in _error(env, "CREATE FUNCTION f AS 'jdbccat_udfs.one' LANGUAGE PYTHON").message
    # temporary objects live in the session, also in this catalog
    env.execute_sql("CREATE TEMPORARY VIEW v AS SELECT name FROM orders")
    assert _rows(env, "SELECT * FROM v") == [("apple",), ("pear",)]
    # a column type Flink does not map: the error names the column and the type
    e = _error(env, "SELECT id FROM `sales.docs`")
    assert "column 'body'" in e.message and "'jsonb'" in e.message
    assert (e.line, e.column) == (1, 16) and "TEMPORARY table" in (e.hint or "")  # at the table's name


def test_connection_errors_name_the_url(shop: tuple[PostgresServer, str]) -> None:
    pg, db = shop
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    base = f"jdbc:postgresql://{pg.host}:{pg.port}"

    def create(**options: str) -> SqlError:
        opts = {"type": "jdbc", "default-database": db, "username": pg.user, "password": "x", "base-url": base}
        opts.update(options)
        text = ", ".join(f"'{k}' = '{v}'" for k, v in opts.items() if v)
        return _error(env, f"CREATE CATALOG c WITH ({text})")

    e = create(username="nobody_here")
    assert e.message.startswith(f"Failed connecting to {base}/{db} via JDBC: ") and "nobody_here" in e.message
    e = create(**{"default-database": "no_such_db"})
    assert e.message.startswith(f"Failed connecting to {base}/no_such_db via JDBC")
    from servers.ports import free_port

    dead = f"jdbc:postgresql://127.0.0.1:{free_port()}"
    assert create(**{"base-url": dead}).message.startswith(f"Failed connecting to {dead}/{db} via JDBC")
    assert "c" not in env.catalog.catalogs
    # ALTER CATALOG checks the new settings as a new catalog would; a failed one changes nothing
    env.execute_sql(
        f"CREATE CATALOG c WITH ('type' = 'jdbc', 'default-database' = '{db}', 'username' = '{pg.user}', "
        f"'password' = 'x', 'base-url' = '{base}')"
    )
    e = _error(env, f"ALTER CATALOG c SET ('base-url' = '{dead}')")
    assert e.message.startswith(f"Failed connecting to {dead}/{db} via JDBC")
    assert ("sales.items",) in _rows(env, f"SHOW TABLES FROM c.`{db}`")
    env.execute_sql("ALTER CATALOG c SET ('default-database' = 'postgres')")
    env.execute_sql("USE CATALOG c")
    assert _rows(env, "SHOW CURRENT DATABASE") == [("postgres",)]
