"""The examples of Flink 2.x's Table API & SQL concept pages run through streamsql: Dynamic
Tables, Time Attributes, Versioned Tables, Determinism in Continuous Queries (docs/dev/table/
concepts/), Performance Tuning (tuning.md), Catalogs (catalogs.md) and Modules (modules.md).

Each runs as the page runs it (the SQL client's statement path in process, or the Python API)
and is compared with what the page prints. Where the page departs from Flink 2.3, the test
follows Flink and says so:

- Dynamic Tables' `clicks` declares a column `user`, a word on Flink's reserved keyword list;
  the tests quote it (`` `user` ``), which every SQL dialect accepts (streamsql takes it
  unquoted too).
- Time Attributes' TIMESTAMP_LTZ example computes `time_ltz AS TO_TIMESTAMP_LTZ(time_ltz, 3)`,
  a column from itself: Flink refuses it (the column is not found); the epoch column is `ts`.
- The pages' `WITH (...)` are elided; a CSV `filesystem` table with the pages' rows stands in.
- A changelog the page draws row by row (the clicks count) is read one row per batch
  (`table.exec.source.batch-rows` = 1): without mini-batch Flink updates per record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runtime.errors import ConfigError
from runtime.state.ttl import set_clock
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.catalog import ObjectPath
from tests.e2e.flink_docs_client import cells, sql_client

CLICKS = """Mary,./home,2024-01-01 12:00:00
Bob,./cart,2024-01-01 12:00:00
Mary,./prod?id=1,2024-01-01 12:02:00
Liz,./home,2024-01-01 12:03:00
Bob,./prod?id=4,2024-01-01 13:01:00
Bob,./cart,2024-01-01 13:30:00
Liz,./home,2024-01-01 13:59:00
"""


def changelog(text: str) -> list[list[str]]:
    """The rows of a printed changelog (header first), the `op` column kept."""
    return [[c.strip() for c in line.strip()[1:-1].split("|")] for line in text.splitlines() if line.startswith("|")]


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clicks.csv").write_text(CLICKS)
    return sql_client()


def _clicks(client: Callable[..., str]) -> None:
    client(
        "CREATE TABLE clicks (`user` VARCHAR, url VARCHAR, cTime TIMESTAMP(3), WATERMARK FOR cTime AS cTime) "
        "WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv')"
    )


# ------------------------------------------------------------------ Dynamic Tables


def test_dynamic_tables_group_count_updates_previous_results(client: Callable[..., str]) -> None:
    """The first query: [Mary, 1], [Bob, 1], then [Mary, 1] updated to [Mary, 2], then [Liz, 1]."""
    (Path.cwd() / "clicks.csv").write_text("".join(CLICKS.splitlines(keepends=True)[:4]))
    client("SET 'table.exec.source.batch-rows' = '1'")
    _clicks(client)
    assert changelog(client("SELECT `user`, COUNT(url) FROM clicks GROUP BY `user`")) == [
        ["op", "user", "EXPR$1"],
        ["+I", "Mary", "1"],
        ["+I", "Bob", "1"],
        ["-U", "Mary", "1"],
        ["+U", "Mary", "2"],
        ["+I", "Liz", "1"],
    ]


def test_dynamic_tables_hourly_window_only_appends(client: Callable[..., str]) -> None:
    """The second query: one row per user and hour, appended as each hour closes."""
    _clicks(client)
    got = cells(
        client(
            "SELECT `user`, TUMBLE_END(cTime, INTERVAL '1' HOURS) AS endT, COUNT(url) AS cnt "
            "FROM clicks GROUP BY `user`, TUMBLE(cTime, INTERVAL '1' HOURS)"
        )
    )
    assert got[0] == ["user", "endT", "cnt"]
    assert sorted(got[1:]) == [
        ["Bob", "2024-01-01 13:00:00.000", "1"],
        ["Bob", "2024-01-01 14:00:00.000", "2"],
        ["Liz", "2024-01-01 13:00:00.000", "1"],
        ["Liz", "2024-01-01 14:00:00.000", "1"],
        ["Mary", "2024-01-01 13:00:00.000", "2"],
    ]


def test_dynamic_tables_rank_over_updating_input_is_refused(client: Callable[..., str]) -> None:
    """The page's example of an expensive query: Flink's streaming OVER needs a time attribute order."""
    _clicks(client)
    out = client(
        "SELECT `user`, RANK() OVER (ORDER BY lastAction) FROM "
        "(SELECT `user`, MAX(cTime) AS lastAction FROM clicks GROUP BY `user`)",
        errors=True,
    )
    assert "OVER windows' ordering in stream mode must be defined on a time attribute." in out


# ------------------------------------------------------------------ Time Attributes


def test_event_time_defined_in_ddl(client: Callable[..., str]) -> None:
    client(
        "CREATE TABLE user_actions (user_name STRING, data STRING, user_action_time TIMESTAMP(3), "
        "WATERMARK FOR user_action_time AS user_action_time - INTERVAL '5' SECOND) "
        "WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv')"
    )
    got = cells(
        client(
            "SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name) "
            "FROM user_actions GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE)"
        )
    )
    assert got == [
        ["EXPR$0", "EXPR$1"],
        ["2024-01-01 12:00:00.000", "3"],
        ["2024-01-01 13:00:00.000", "1"],
        ["2024-01-01 13:30:00.000", "1"],
        ["2024-01-01 13:50:00.000", "1"],
    ]


def test_event_time_on_timestamp_ltz_from_epoch(client: Callable[..., str]) -> None:
    (Path.cwd() / "epoch.csv").write_text("Mary,a,1704110400000\nBob,b,1704110460000\nLiz,c,1704111060000\n")
    # the page's text: the computed column reads itself, which Flink refuses
    out = client(
        "CREATE TABLE bad (user_name STRING, data STRING, ts BIGINT, time_ltz AS TO_TIMESTAMP_LTZ(time_ltz, 3), "
        "WATERMARK FOR time_ltz AS time_ltz - INTERVAL '5' SECOND) "
        "WITH ('connector' = 'filesystem', 'path' = 'epoch.csv', 'format' = 'csv')",
        errors=True,
    )
    assert "Column 'time_ltz' not found in any table" in out
    client(
        "CREATE TABLE user_actions (user_name STRING, data STRING, ts BIGINT, time_ltz AS TO_TIMESTAMP_LTZ(ts, 3), "
        "WATERMARK FOR time_ltz AS time_ltz - INTERVAL '5' SECOND) "
        "WITH ('connector' = 'filesystem', 'path' = 'epoch.csv', 'format' = 'csv')"
    )
    got = cells(
        client(
            "SELECT TUMBLE_START(time_ltz, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name) "
            "FROM user_actions GROUP BY TUMBLE(time_ltz, INTERVAL '10' MINUTE)"
        )
    )
    assert got == [["EXPR$0", "EXPR$1"], ["2024-01-01 12:00:00.000", "2"], ["2024-01-01 12:10:00.000", "1"]]


def test_processing_time_defined_in_ddl(client: Callable[..., str]) -> None:
    (Path.cwd() / "actions.csv").write_text("Mary,a\nBob,b\nMary,c\n")
    client(
        "CREATE TABLE user_actions (user_name STRING, data STRING, user_action_time AS PROCTIME()) "
        "WITH ('connector' = 'filesystem', 'path' = 'actions.csv', 'format' = 'csv')"
    )
    described = cells(client("DESCRIBE user_actions"))
    assert described[3][:3] == ["user_action_time", "TIMESTAMP_LTZ(3) *PROCTIME*", "FALSE"]
    got = cells(
        client(
            "SELECT TUMBLE_START(user_action_time, INTERVAL '10' MINUTE), COUNT(DISTINCT user_name) "
            "FROM user_actions GROUP BY TUMBLE(user_action_time, INTERVAL '10' MINUTE)"
        )
    )
    # a bounded input ends the processing-time window: one window, two users
    assert [r[1] for r in got[1:]] == ["2"]


def test_ordinary_timestamps_are_not_time_attributes(client: Callable[..., str]) -> None:
    """ "Ordinary timestamps cannot be used in place of, or be converted to, time attributes":
    a window over a TIMESTAMP column without a WATERMARK, or over a computed timestamp."""
    client(
        "CREATE TABLE plain (user_name STRING, data STRING, ts TIMESTAMP(3)) "
        "WITH ('connector' = 'filesystem', 'path' = 'clicks.csv', 'format' = 'csv')"
    )
    _clicks(client)
    for sql in [
        "SELECT COUNT(*) FROM plain GROUP BY TUMBLE(ts, INTERVAL '10' MINUTE)",
        "SELECT COUNT(*) FROM clicks GROUP BY TUMBLE(cTime + INTERVAL '1' SECOND, INTERVAL '10' MINUTE)",
    ]:
        assert "Window can only be defined over a time attribute column." in client(sql, errors=True)


def test_no_watermark_on_a_processing_time_attribute(client: Callable[..., str]) -> None:
    """Flink's schema resolver refuses it (streamsql accepted it before)."""
    out = client(
        "CREATE TABLE user_actions (user_name STRING, user_action_time AS PROCTIME(), "
        "WATERMARK FOR user_action_time AS user_action_time) WITH ('connector' = 'datagen')",
        errors=True,
    )
    assert "org.apache.flink.table.api.ValidationException: A watermark can not be defined for a processing-time " in (
        out
    )


# ------------------------------------------------------------------ Versioned Tables


def test_versioned_view_over_append_only_rates(client: Callable[..., str]) -> None:
    (Path.cwd() / "rates.csv").write_text(
        "Yen,102,2024-01-01 09:00:00\nEuro,114,2024-01-01 09:00:00\nUSD,1,2024-01-01 09:00:00\n"
        "Euro,116,2024-01-01 10:45:00\nEuro,119,2024-01-01 11:15:00\nPounds,108,2024-01-01 11:49:00\n"
    )
    client("SET 'table.exec.source.batch-rows' = '1'")
    client(
        "CREATE TABLE currency_rates (currency STRING, rate DECIMAL(32, 10), update_time TIMESTAMP(3), "
        "WATERMARK FOR update_time AS update_time) "
        "WITH ('connector' = 'filesystem', 'path' = 'rates.csv', 'format' = 'csv')"
    )
    client(
        """CREATE VIEW versioned_rates AS
SELECT currency, rate, update_time              -- (1) `update_time` keeps the event time
  FROM (
      SELECT *,
      ROW_NUMBER() OVER (PARTITION BY currency  -- (2) the inferred unique key `currency` can be a primary key
         ORDER BY update_time DESC) AS rownum
      FROM currency_rates)
WHERE rownum = 1"""
    )
    got = changelog(client("SELECT currency, CAST(rate AS INT), update_time FROM versioned_rates"))
    # the page's changelog, with the UPDATE_BEFORE rows a retracting client also receives
    assert got[1:] == [
        ["+I", "Yen", "102", "2024-01-01 09:00:00.000"],
        ["+I", "Euro", "114", "2024-01-01 09:00:00.000"],
        ["+I", "USD", "1", "2024-01-01 09:00:00.000"],
        ["-U", "Euro", "114", "2024-01-01 09:00:00.000"],
        ["+U", "Euro", "116", "2024-01-01 10:45:00.000"],
        ["-U", "Euro", "116", "2024-01-01 10:45:00.000"],
        ["+U", "Euro", "119", "2024-01-01 11:15:00.000"],
        ["+I", "Pounds", "108", "2024-01-01 11:49:00.000"],
    ]
    plan = client("EXPLAIN SELECT * FROM versioned_rates")
    assert "Deduplicate(keep=[LastRow], key=[currency], order=[ROWTIME])" in plan


def test_event_time_temporal_join_against_a_versioned_view(client: Callable[..., str]) -> None:
    """Joins in Continuous Queries: each order gets the rate valid at its order time (the
    page's output; its SQL's typos — `values.source.timestamp`, VIRTURAL, `FOR SYSTEM TIME`,
    a trailing comma — are fixed, and the rates come from the versioned view above)."""
    (Path.cwd() / "orders.csv").write_text("o_001,11.11,EUR,2024-01-01 12:00:00\no_002,12.51,EUR,2024-01-01 12:06:00\n")
    (Path.cwd() / "rates.csv").write_text("EUR,1.14,2024-01-01 11:50:00\nEUR,1.10,2024-01-01 12:05:00\n")
    client(
        "CREATE TABLE orders (order_id STRING, price DECIMAL(32,2), currency STRING, order_time TIMESTAMP(3), "
        "WATERMARK FOR order_time AS order_time) "
        "WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv')"
    )
    client(
        "CREATE TABLE rates_log (currency STRING, conversion_rate DECIMAL(32, 2), update_time TIMESTAMP(3), "
        "WATERMARK FOR update_time AS update_time) "
        "WITH ('connector' = 'filesystem', 'path' = 'rates.csv', 'format' = 'csv')"
    )
    client(
        "CREATE VIEW currency_rates AS SELECT currency, conversion_rate, update_time FROM ("
        "SELECT *, ROW_NUMBER() OVER (PARTITION BY currency ORDER BY update_time DESC) AS rownum FROM rates_log) "
        "WHERE rownum = 1"
    )
    got = cells(
        client(
            "SELECT order_id, price, orders.currency, conversion_rate, order_time FROM orders "
            "LEFT JOIN currency_rates FOR SYSTEM_TIME AS OF orders.order_time "
            "ON orders.currency = currency_rates.currency"
        )
    )
    assert got == [
        ["order_id", "price", "currency", "conversion_rate", "order_time"],
        ["o_001", "11.11", "EUR", "1.14", "2024-01-01 12:00:00.000"],
        ["o_002", "12.51", "EUR", "1.10", "2024-01-01 12:06:00.000"],
    ]


# ------------------------------------------------------------------ Determinism


def _determinism_clicks(client: Callable[..., str]) -> None:
    (Path.cwd() / "log.csv").write_text(
        "Mary,2022-08-22 12:00:01,/home\nBob,2022-08-22 12:00:01,/home\nMary,2022-08-22 12:00:05,/prod?id=1\n"
        "Liz,2022-08-22 12:01:00,/home\nMary,2022-08-22 12:01:30,/cart\nBob,2022-08-22 12:01:35,/prod?id=3\n"
    )
    client(
        "CREATE TABLE clicks (uid VARCHAR(128), cTime TIMESTAMP(3), url VARCHAR(256)) "
        "WITH ('connector' = 'filesystem', 'path' = 'log.csv', 'format' = 'csv')"
    )


def _at(text: str) -> Callable[[], int]:
    """A processing-time clock stopped at UTC wall clock `text` (epoch ms)."""
    import datetime as dt

    ms = int(dt.datetime.fromisoformat(text + "+00:00").timestamp() * 1000)
    return lambda: ms


def test_batch_time_filter_depends_on_when_it_runs(client: Callable[..., str]) -> None:
    """Query 1 of the page: submitted at 12:02:00 it returns all 6 rows, a minute later 3."""
    _determinism_clicks(client)
    client("SET 'execution.runtime-mode' = 'batch'")
    query = "SELECT * FROM clicks WHERE cTime BETWEEN TIMESTAMPADD(MINUTE, -2, CURRENT_TIMESTAMP) AND CURRENT_TIMESTAMP"
    previous = set_clock(_at("2022-08-22 12:02:00"))
    try:
        assert len(cells(client(query))) == 7
        set_clock(_at("2022-08-22 12:03:00"))
        assert cells(client(query))[1:] == [
            ["Liz", "2022-08-22 12:01:00.000", "/home"],
            ["Mary", "2022-08-22 12:01:30.000", "/cart"],
            ["Bob", "2022-08-22 12:01:35.000", "/prod?id=3"],
        ]
    finally:
        set_clock(previous)


def test_batch_current_timestamp_is_one_value_uuid_is_per_row(client: Callable[..., str]) -> None:
    _determinism_clicks(client)
    client("SET 'execution.runtime-mode' = 'batch'")
    previous = set_clock(_at("2022-08-23 17:25:46.831"))
    try:
        stamped = cells(client("SELECT CURRENT_TIMESTAMP, * FROM clicks"))
    finally:
        set_clock(previous)
    assert stamped[0] == ["CURRENT_TIMESTAMP", "uid", "cTime", "url"]
    assert [r[0] for r in stamped[1:]] == ["2022-08-23 17:25:46.831"] * 6  # the page's table
    uuids = cells(client("SELECT UUID() AS uuid, * FROM clicks LIMIT 3"))
    assert uuids[0] == ["uuid", "uid", "cTime", "url"] and len(uuids) == 4
    assert len({r[0] for r in uuids[1:]}) == 3  # a new value per row, and per run


def test_try_resolve_refuses_the_pages_non_deterministic_update(client: Callable[..., str]) -> None:
    """The page's FLINK-27639 case (its `ord.` / `logistics.` aliases fixed to `o` / `l`):
    with TRY_RESOLVE, NOW() on a join of CDC tables into a retract sink is refused with
    Flink's message and the related plan (tests/unit/planner/test_non_deterministic_update.py
    has the check's other rules)."""
    (Path.cwd() / "changes.json").write_text("")
    client(
        "CREATE TABLE t_order (order_id INT, order_name STRING, PRIMARY KEY (order_id) NOT ENFORCED) "
        "WITH ('connector' = 'filesystem', 'path' = 'changes.json', 'format' = 'debezium-json')"
    )
    client(
        "CREATE TABLE t_logistics (logistics_id INT, logistics_target STRING, logistics_source STRING, "
        "order_id INT, PRIMARY KEY (logistics_id) NOT ENFORCED) "
        "WITH ('connector' = 'filesystem', 'path' = 'changes.json', 'format' = 'debezium-json')"
    )
    client(
        "CREATE TABLE t_join_sink (order_id INT, order_name STRING, logistics_id INT, logistics_target STRING, "
        "logistics_source STRING, logistics_time TIMESTAMP(6)) WITH ('connector' = 'print')"
    )
    insert = """INSERT INTO t_join_sink
SELECT o.order_id, o.order_name, l.logistics_id, l.logistics_target, l.logistics_source, now()
FROM t_order AS o
LEFT JOIN t_logistics AS l ON o.order_id=l.order_id"""
    client("SET 'table.optimizer.non-deterministic-update.strategy' = 'TRY_RESOLVE'")
    out = client(insert, errors=True)
    assert "org.apache.flink.table.api.TableException: The column(s): " in out
    assert "(generated by non-deterministic function: NOW ) can not satisfy the determinism requirement" in out
    assert "related rel plan:\nCalc(" in out
    # the page's fix: no now()
    client("EXPLAIN " + insert.replace(", now()", ", CAST(NULL AS TIMESTAMP(6))"))


# ------------------------------------------------------------------ Performance Tuning

TUNING_ROWS = """1,red,2024-01-01,u1,android
2,red,2024-01-01,u2,iphone
3,blue,2024-01-01,u1,wap
4,red,2024-01-02,u3,other
5,blue,2024-01-02,u3,android
6,red,2024-01-02,u1,wap
"""

TUNING_QUERIES = {
    "local-global": ("SELECT color, sum(id) FROM T GROUP BY color", [["blue", "8"], ["red", "13"]]),
    # the page: local-global serves "general aggregation, such as SUM, COUNT, MAX, MIN, AVG"
    "general": (
        "SELECT color, AVG(id), MIN(id), MAX(id), COUNT(*), AVG(CAST(id AS DOUBLE)) FROM T GROUP BY color",
        [["blue", "4", "3", "5", "2", "4.0"], ["red", "3", "1", "6", "4", "3.25"]],
    ),
    "split-distinct": (
        "SELECT `day`, COUNT(DISTINCT user_id) FROM T GROUP BY `day`",
        [["2024-01-01", "2"], ["2024-01-02", "2"]],
    ),
    "case-when": (
        "SELECT `day`, COUNT(DISTINCT user_id) AS total_uv, "
        "COUNT(DISTINCT CASE WHEN flag IN ('android', 'iphone') THEN user_id ELSE NULL END) AS app_uv, "
        "COUNT(DISTINCT CASE WHEN flag IN ('wap', 'other') THEN user_id ELSE NULL END) AS web_uv "
        "FROM T GROUP BY `day`",
        [["2024-01-01", "2", "2", "1"], ["2024-01-02", "2", "1", "2"]],
    ),
    "filter": (
        "SELECT `day`, COUNT(DISTINCT user_id) AS total_uv, "
        "COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('android', 'iphone')) AS app_uv, "
        "COUNT(DISTINCT user_id) FILTER (WHERE flag IN ('wap', 'other')) AS web_uv "
        "FROM T GROUP BY `day`",
        [["2024-01-01", "2", "2", "1"], ["2024-01-02", "2", "1", "2"]],
    ),
}

TUNING_OPTIONS = {
    "none": {},
    "mini-batch": {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "5 s",
        "table.exec.mini-batch.size": "5000",
    },
    "local-global": {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "5 s",
        "table.exec.mini-batch.size": "5000",
        "table.optimizer.agg-phase-strategy": "TWO_PHASE",
    },
    "split-distinct": {"table.optimizer.distinct-agg.split.enabled": "true"},
}


@pytest.mark.parametrize("options", list(TUNING_OPTIONS), ids=list(TUNING_OPTIONS))
def test_tuning_options_keep_the_results(tmp_path: Path, options: str) -> None:
    """The page's queries under each option it sets (its Python tab: `get_config().set`):
    the final tables equal those without the optimization; the plan shows it."""
    (tmp_path / "t.csv").write_text(TUNING_ROWS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    for k, v in TUNING_OPTIONS[options].items():
        t_env.get_config().set(k, v)
    t_env.execute_sql(
        "CREATE TABLE T (id INT, color STRING, `day` STRING, user_id STRING, flag STRING) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't.csv'}', 'format' = 'csv')"
    )
    for sql, expected in TUNING_QUERIES.values():
        final: dict[str, list[str]] = {}
        for row in t_env.execute_sql(sql).collect():
            kind = row.get_row_kind().name
            values = [str(v) for v in row]
            if kind in ("INSERT", "UPDATE_AFTER"):
                final[values[0]] = values
            elif kind == "DELETE":
                final.pop(values[0], None)
        assert sorted(final.values()) == expected, (options, sql)
    query, shown = {
        "none": ("split-distinct", "GroupAggregate(groupBy=[day], select=[day, COUNT(DISTINCT user_id) AS EXPR$1])"),
        "mini-batch": ("split-distinct", "MiniBatchAssigner(interval=[5000ms], mode=[ProcTime])"),
        "local-global": ("general", "LocalGroupAggregate(groupBy=[color], select=[color, AVG(id) AS (sum$0, count$0)"),
        "split-distinct": ("split-distinct", "MOD(HASH_CODE(user_id), 1024)"),
    }[options]
    assert shown in t_env.explain_sql(TUNING_QUERIES[query][0])


# ------------------------------------------------------------------ Catalogs


def _catalog_env() -> TableEnvironment:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.execute_sql("CREATE CATALOG mycat WITH ('type' = 'generic_in_memory')")
    return t_env


def test_catalog_api_databases_tables_views(tmp_path: Path) -> None:
    from streamsql.catalog import CatalogDatabase

    t_env = _catalog_env()
    catalog = t_env.get_catalog("mycat")
    catalog.create_database("mydb", CatalogDatabase.create_instance({"k1": "v1"}, None), False)
    assert catalog.list_databases() == ["default", "mydb"] and catalog.database_exists("mydb")
    catalog.alter_database("mydb", CatalogDatabase.create_instance({"k1": "v2"}, None), False)
    assert catalog.get_database("mydb").get_properties() == {"k1": "v2"}
    t_env.execute_sql(
        "CREATE TABLE mycat.mydb.mytable (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED) COMMENT 'people' "
        f"PARTITIONED BY (name) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    t_env.execute_sql("CREATE VIEW mycat.mydb.myview AS SELECT id FROM mycat.mydb.mytable")
    assert catalog.table_exists(ObjectPath("mydb", "mytable"))
    assert catalog.list_views("mydb") == ["myview"]
    # get_table returns the stored definition (it returned the columns alone before, so a
    # copy made from it had no connector and could not be read)
    table = catalog.get_table(ObjectPath("mydb", "mytable"))
    assert table.get_options() == {"connector": "filesystem", "path": str(tmp_path), "format": "csv"}
    assert table.get_comment() == "people" and table.get_partition_keys() == ["name"]
    assert table.get_unresolved_schema().get_primary_key().get_columns() == ["id"]
    catalog.create_table(ObjectPath("mydb", "copy"), table, False)
    t_env.execute_sql("INSERT INTO mycat.mydb.copy VALUES (1, 'a')").wait()
    assert [tuple(r) for r in t_env.execute_sql("SELECT * FROM mycat.mydb.copy").collect()] == [(1, "a")]
    view = catalog.get_table(ObjectPath("mydb", "myview"))
    assert view.get_table_kind() == "VIEW"
    catalog.create_table(ObjectPath("mydb", "view_copy"), view, False)
    assert [tuple(r) for r in t_env.execute_sql("SELECT * FROM mycat.mydb.view_copy").collect()] == [(1,)]
    catalog.rename_table(ObjectPath("mydb", "copy"), "copy2", False)
    catalog.drop_table(ObjectPath("mydb", "copy2"), False)
    assert not catalog.table_exists(ObjectPath("mydb", "copy2"))


def test_catalog_api_views_and_alter(tmp_path: Path) -> None:
    """The page's view operations (create_view, alter_table, rename_table, drop_table) and
    alter_table of a table, which replaces the definition as Flink's in-memory catalog does
    (before: a view was not altered, nor renamed, and a table's new options were merged into
    the old ones)."""
    from streamsql import DataTypes, Schema
    from streamsql.catalog import CatalogBaseTable, CatalogException

    t_env = _catalog_env()
    t_env.execute_sql("CREATE DATABASE mycat.mydb")
    catalog = t_env.get_catalog("mycat")
    t_env.execute_sql(
        "CREATE TABLE mycat.mydb.mytable (name STRING, age INT) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    schema = Schema.new_builder().column("name", DataTypes.STRING()).column("age", DataTypes.INT()).build()
    view = CatalogBaseTable.create_view(
        original_query="select * from mycat.mydb.mytable",
        expanded_query="select * from mycat.mydb.mytable",
        schema=schema,
        properties={},
        comment="This is a view",
    )
    catalog.create_table(ObjectPath("mydb", "myview"), view, False)
    narrower = CatalogBaseTable.create_view(
        "select name from mycat.mydb.mytable", "select name from mycat.mydb.mytable", schema, {}, "v2"
    )
    catalog.alter_table(ObjectPath("mydb", "myview"), narrower, False)
    assert [f.name for f in t_env.from_path("mycat.mydb.myview").get_schema()] == ["name"]
    catalog.rename_table(ObjectPath("mydb", "myview"), "my_new_view", False)
    assert catalog.list_views("mydb") == ["my_new_view"]
    with pytest.raises(CatalogException, match="Table types don't match. Existing table is 'VIEW'"):
        catalog.alter_table(ObjectPath("mydb", "my_new_view"), CatalogBaseTable.create_table(schema), False)
    catalog.drop_table(ObjectPath("mydb", "my_new_view"), False)
    assert catalog.list_views("mydb") == []
    replaced = CatalogBaseTable.create_table(schema=schema, properties={"connector": "datagen"}, comment="my comment")
    catalog.alter_table(ObjectPath("mydb", "mytable"), replaced, False)
    table = catalog.get_table(ObjectPath("mydb", "mytable"))
    assert table.get_options() == {"connector": "datagen"} and table.get_comment() == "my comment"
    catalog.alter_table(ObjectPath("mydb", "missing"), replaced, True)  # ignore_if_not_exists
    with pytest.raises(CatalogException, match="does not exist in Catalog mycat"):
        catalog.alter_table(ObjectPath("mydb", "missing"), replaced, False)


def test_catalog_api_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The page's function operations; list_functions / function_exists (SHOW USER FUNCTIONS
    FROM db) listed the current database's functions instead of the named one's."""
    from streamsql.catalog import CatalogFunction

    (tmp_path / "page_udfs.py").write_text(
        "from streamsql import DataTypes\nfrom streamsql.udf import udf\n\n\n"
        "@udf(result_type=DataTypes.STRING())\ndef shout(s):\n    return s.upper()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    t_env = _catalog_env()
    t_env.execute_sql("CREATE DATABASE mycat.mydb")
    catalog = t_env.get_catalog("mycat")
    catalog.create_function(ObjectPath("mydb", "myfunc"), CatalogFunction.create_instance("page_udfs.shout"), False)
    assert catalog.function_exists(ObjectPath("mydb", "myfunc"))
    assert catalog.list_functions("mydb") == ["myfunc"]
    assert catalog.get_function(ObjectPath("mydb", "myfunc")).get_class_name() == "page_udfs.shout"
    assert [tuple(r) for r in t_env.execute_sql("SELECT mycat.mydb.myfunc('a')").collect()] == [("A",)]
    assert cells_of(t_env, "SHOW USER FUNCTIONS FROM mycat.mydb") == ["myfunc"]
    assert cells_of(t_env, "SHOW USER FUNCTIONS") == []  # the current database has none
    catalog.drop_function(ObjectPath("mydb", "myfunc"), False)
    assert not catalog.function_exists(ObjectPath("mydb", "myfunc"))


def test_catalog_api_partitions(tmp_path: Path) -> None:
    """The page's partition operations: list / exists / get read the partitions the
    filesystem table stores (they raised before); create / alter / drop are refused, as
    ALTER TABLE ... ADD / DROP PARTITION is (the catalogs keep no partition metadata)."""
    from streamsql.catalog import CatalogException, CatalogPartition, CatalogPartitionSpec

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql(
        "CREATE TABLE mytable (name STRING, age INT, third STRING, second STRING) PARTITIONED BY (third, second) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')"
    )
    t_env.execute_sql("INSERT INTO mytable VALUES ('a', 1, '2010', 'bob'), ('b', 2, '2011', 'liz')").wait()
    catalog = t_env.get_catalog("default_catalog")
    path = ObjectPath("default_database", "mytable")
    spec = CatalogPartitionSpec({"third": "2010", "second": "bob"})
    assert [p.get_partition_spec() for p in catalog.list_partitions(path)] == [
        {"third": "2010", "second": "bob"},
        {"third": "2011", "second": "liz"},
    ]
    assert [p.get_partition_spec() for p in catalog.list_partitions(path, CatalogPartitionSpec({"third": "2011"}))] == [
        {"third": "2011", "second": "liz"}
    ]
    assert catalog.partition_exists(path, spec)
    assert catalog.get_partition(path, spec).get_properties() == {}
    with pytest.raises(CatalogException, match="does not exist"):
        catalog.get_partition(path, CatalogPartitionSpec({"third": "1999", "second": "x"}))
    with pytest.raises(CatalogException, match="a partition exists once rows are written into it"):
        catalog.create_partition(path, spec, CatalogPartition.create_instance({}, "my partition"), False)


def cells_of(t_env: TableEnvironment, sql: str) -> list[str]:
    return [str(r[0]) for r in t_env.execute_sql(sql).collect()]


def test_file_catalog_store_keeps_catalogs_across_sessions(tmp_path: Path) -> None:
    """`table.catalog-store.kind` = file: CREATE CATALOG writes `<name>.yaml` (its options),
    the next session registers it, DROP CATALOG removes the file."""
    store = tmp_path / "store"
    store.mkdir()
    conf = {"table.catalog-store.kind": "file", "table.catalog-store.file.path": str(store)}
    settings = EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(conf).build()
    first = TableEnvironment.create(settings)
    first.execute_sql("CREATE CATALOG cat1 WITH ('type' = 'generic_in_memory', 'default-database' = 'mydb')")
    assert (store / "cat1.yaml").read_text() == 'type: "generic_in_memory"\ndefault-database: "mydb"\n'
    second = TableEnvironment.create(settings)
    assert second.list_catalogs() == ["cat1", "default_catalog"]
    second.use_catalog("cat1")
    assert second.get_current_database() == "mydb"
    second.use_catalog("default_catalog")
    second.execute_sql("DROP CATALOG cat1")
    assert list(store.iterdir()) == []
    # the in-memory store (the default) keeps nothing
    TableEnvironment.create().execute_sql("CREATE CATALOG cat2 WITH ('type' = 'generic_in_memory')")
    assert "cat2" not in TableEnvironment.create(settings).list_catalogs()


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ({"table.catalog-store.kind": "jdbc"}, "no CatalogStoreFactory has this identifier"),
        ({"table.catalog-store.kind": "file"}, "missing required option 'path'"),
        (
            {"table.catalog-store.kind": "file", "table.catalog-store.file.path": "/nonexistent/store"},
            "the catalog store directory /nonexistent/store does not exist",
        ),
    ],
)
def test_catalog_store_misconfiguration(conf: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        TableEnvironment.create(EnvironmentSettings.new_instance().with_configuration(conf).build())


# ------------------------------------------------------------------ Modules


def test_modules_show_load_use(client: Callable[..., str]) -> None:
    assert cells(client("SHOW MODULES")) == [["module name"], ["core"]]
    assert cells(client("SHOW FULL MODULES")) == [["module name", "used"], ["core", "TRUE"]]
    # the page loads Hive's module, a Java one
    out = client("LOAD MODULE hive WITH ('hive-version' = '3.1.2')", errors=True)
    assert "Could not find any factory for identifier 'hive'" in out
    client("USE MODULES core")
    assert "No module with name 'hive' exists" in client("USE MODULES hive, core", errors=True)
    assert "A module with name 'core' already exists" in client("LOAD MODULE core", errors=True)
