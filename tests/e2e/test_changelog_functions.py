"""TO_CHANGELOG / FROM_CHANGELOG end to end: an updating GROUP BY result written through
TO_CHANGELOG into an append-only filesystem sink, FROM_CHANGELOG of a CDC-shaped append
table into a GROUP BY, the round trip FROM_CHANGELOG(TO_CHANGELOG(x)) = x, and the errors.

Sources read one row per batch (`table.exec.source.batch-rows` = 1), so the GROUP BY
emits Flink's per-record changelog and the expected rows are Flink's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.errors import SqlValidationError, UnsupportedSqlError
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.row import RowKind

ORDERS = "a,1\nb,2\na,3\nc,4\nb,5\n"
# Flink's changelog of SELECT name, SUM(amount) FROM orders GROUP BY name, record by record.
AGG_CHANGELOG = [
    ("INSERT", "a", 1),
    ("INSERT", "b", 2),
    ("UPDATE_BEFORE", "a", 1),
    ("UPDATE_AFTER", "a", 4),
    ("INSERT", "c", 4),
    ("UPDATE_BEFORE", "b", 2),
    ("UPDATE_AFTER", "b", 7),
]
AGG = "SELECT name, SUM(amount) AS total FROM orders GROUP BY name"


def _env(tmp_path: Path, streaming: bool = True) -> TableEnvironment:
    settings = EnvironmentSettings.in_streaming_mode() if streaming else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    env.get_config().set("table.exec.source.batch-rows", "1")
    (tmp_path / "orders.csv").write_text(ORDERS)
    env.execute_sql(
        "CREATE TABLE orders (name STRING, amount BIGINT) "
        f"WITH ('connector'='filesystem', 'path'='{tmp_path / 'orders.csv'}', 'format'='csv')"
    )
    return env


def _read_csv_dir(path: Path) -> list[list[str]]:
    rows: list[list[str]] = []
    for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
        rows += [line.split(",") for line in f.read_text().splitlines() if line]
    return rows


def test_group_by_through_to_changelog_into_append_only_filesystem_sink(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.execute_sql(
        "CREATE TABLE audit (op STRING, name STRING, total BIGINT) "
        f"WITH ('connector'='filesystem', 'path'='{tmp_path / 'audit'}', 'format'='csv')"
    )
    with pytest.raises(UnsupportedSqlError, match="doesn't support consuming update changes"):
        env.execute_sql(f"INSERT INTO audit SELECT 'x', name, total FROM ({AGG})").wait()
    env.execute_sql(f"INSERT INTO audit SELECT * FROM TO_CHANGELOG(input => TABLE ({AGG}))").wait()
    assert _read_csv_dir(tmp_path / "audit") == [[op, n, str(t)] for op, n, t in AGG_CHANGELOG]


def test_to_changelog_rows_are_inserts_with_the_op_of_each_change(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.execute_sql(f"CREATE TEMPORARY VIEW agg AS {AGG}")
    result = env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE agg)")
    assert [f.name for f in result.fields] == ["op", "name", "total"]
    assert str(result.fields[0].type) == "STRING"
    rows = list(result.collect())
    assert {r.get_row_kind() for r in rows} == {RowKind.INSERT}
    assert [tuple(r) for r in rows] == AGG_CHANGELOG


def test_to_changelog_op_descriptor_and_mapping_filter(tmp_path: Path) -> None:
    env = _env(tmp_path)
    rows = env.execute_sql(
        f"SELECT deleted, name, total FROM TO_CHANGELOG(input => TABLE ({AGG}), op => DESCRIPTOR(deleted), "
        "op_mapping => MAP['INSERT, UPDATE_AFTER', 'false', 'DELETE', 'true'])"
    ).collect()
    assert [tuple(r) for r in rows] == [
        ("false", "a", 1),
        ("false", "b", 2),
        ("false", "a", 4),
        ("false", "c", 4),
        ("false", "b", 7),
    ]


def test_round_trip_from_changelog_of_to_changelog_equals_input(tmp_path: Path) -> None:
    env = _env(tmp_path)
    env.execute_sql(f"CREATE TEMPORARY VIEW agg AS {AGG}")
    original = [(r.get_row_kind(), tuple(r)) for r in env.execute_sql("SELECT * FROM agg").collect()]
    env.execute_sql("CREATE TEMPORARY VIEW changelog_view AS SELECT * FROM TO_CHANGELOG(input => TABLE agg)")
    back = env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE changelog_view)")
    assert [f.name for f in back.fields] == ["name", "total"]
    assert [(r.get_row_kind(), tuple(r)) for r in back.collect()] == original
    assert len(original) == len(AGG_CHANGELOG)


@pytest.mark.parametrize("streaming", [True, False])
def test_from_changelog_of_cdc_codes_into_group_by(tmp_path: Path, streaming: bool) -> None:
    env = _env(tmp_path, streaming)
    (tmp_path / "cdc.csv").write_text("1,c,Alice\n2,r,Bob\n1,ub,Alice\n1,ua,Alice2\n2,d,Bob\n3,?,Carol\n4,,Dan\n")
    env.execute_sql(
        "CREATE TABLE cdc (id INT, op STRING, name STRING) "
        f"WITH ('connector'='filesystem', 'path'='{tmp_path / 'cdc.csv'}', 'format'='csv')"
    )
    call = (
        "FROM_CHANGELOG(input => TABLE cdc, op_mapping => MAP['c, r', 'INSERT', 'ub', 'UPDATE_BEFORE', "
        "'ua', 'UPDATE_AFTER', 'd', 'DELETE'])"
    )
    if streaming:
        rows = [(r.get_row_kind(), tuple(r)) for r in env.execute_sql(f"SELECT * FROM {call}").collect()]
        assert rows == [
            (RowKind.INSERT, (1, "Alice")),
            (RowKind.INSERT, (2, "Bob")),
            (RowKind.UPDATE_BEFORE, (1, "Alice")),
            (RowKind.UPDATE_AFTER, (1, "Alice2")),
            (RowKind.DELETE, (2, "Bob")),
        ]
    final = env.sql_query(f"SELECT COUNT(*) AS n, MAX(name) AS m FROM {call}").to_pandas()
    assert final.values.tolist() == [[1, "Alice2"]]


def test_to_changelog_in_batch_mode_codes_inserts(tmp_path: Path) -> None:
    env = _env(tmp_path, streaming=False)
    rows = env.execute_sql("SELECT op, name FROM TO_CHANGELOG(input => TABLE orders)").collect()
    assert [tuple(r) for r in rows] == [("INSERT", n) for n in "abacb"]


def test_errors_name_the_argument(tmp_path: Path) -> None:
    env = _env(tmp_path)
    with pytest.raises(SqlValidationError, match="set semantics"):
        env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE orders PARTITION BY name)")
    with pytest.raises(SqlValidationError, match="op column 'op' does not exist"):
        env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE orders)")
    with pytest.raises(SqlValidationError, match="must be of STRING type"):
        env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE orders, op => DESCRIPTOR(amount))")
    with pytest.raises(UnsupportedSqlError, match="must be append-only"):
        env.execute_sql(f"SELECT * FROM FROM_CHANGELOG(input => TABLE ({AGG}), op => DESCRIPTOR(name))")


def test_table_api_to_changelog_and_from_changelog(tmp_path: Path) -> None:
    from streamsql.expressions import col, descriptor, map_

    env = _env(tmp_path)
    agg = env.from_path("orders").group_by(col("name")).select(col("name"), col("amount").sum.alias("total"))
    log = agg.to_changelog()
    assert log.get_schema().get_field_names() == ["op", "name", "total"]
    assert [tuple(r) for r in log.execute().collect()] == AGG_CHANGELOG
    coded = agg.to_changelog(
        descriptor("code").as_argument("op"), map_("INSERT", "I", "UPDATE_AFTER", "U").as_argument("op_mapping")
    )
    assert [tuple(r) for r in coded.execute().collect()] == [
        ("I", "a", 1),
        ("I", "b", 2),
        ("U", "a", 4),
        ("I", "c", 4),
        ("U", "b", 7),
    ]
    back = log.from_changelog()
    assert back.get_schema().get_field_names() == ["name", "total"]
    expected = [(r.get_row_kind(), tuple(r)) for r in agg.execute().collect()]
    assert [(r.get_row_kind(), tuple(r)) for r in back.execute().collect()] == expected
    # positional arguments: op, then op_mapping
    renamed = agg.to_changelog(descriptor("kind")).from_changelog(descriptor("kind"))
    assert [(r.get_row_kind(), tuple(r)) for r in renamed.execute().collect()] == expected


def test_lag_over_an_updating_table_through_to_changelog(tmp_path: Path) -> None:
    """Flink's LAG-on-retract use case: a CDC table's INSERT / UPDATE_AFTER events become
    append-only rows that keep the time attribute, so an OVER window can follow them."""
    import json

    def image(i: int, status: str, sec: int) -> dict[str, object]:
        return {"order_id": i, "status": status, "ts": f"1970-01-01 00:00:0{sec}"}

    events = [
        {"before": None, "after": image(1, "CREATED", 1), "op": "c"},
        {"before": None, "after": image(2, "CREATED", 2), "op": "c"},
        {"before": image(1, "CREATED", 1), "after": image(1, "SHIPPED", 3), "op": "u"},
        {"before": image(1, "SHIPPED", 3), "after": image(1, "DELIVERED", 4), "op": "u"},
        {"before": image(2, "CREATED", 2), "after": None, "op": "d"},
    ]
    (tmp_path / "orders.json").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    env = _env(tmp_path)
    env.execute_sql(
        "CREATE TABLE cdc_orders (order_id INT NOT NULL, status STRING, ts TIMESTAMP(3), "
        "PRIMARY KEY (order_id) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
        f"'connector'='filesystem', 'path'='{tmp_path / 'orders.json'}', 'format'='debezium-json')"
    )
    env.execute_sql(
        "CREATE TEMPORARY VIEW orders_changelog AS SELECT op, order_id, status, ts FROM TO_CHANGELOG("
        "input => TABLE cdc_orders, op_mapping => MAP['INSERT', 'INSERT', 'UPDATE_AFTER', 'UPDATE_AFTER'])"
    )
    rows = env.execute_sql(
        "SELECT order_id, op, status, LAG(status) OVER (PARTITION BY order_id ORDER BY ts) AS prev_status "
        "FROM orders_changelog"
    ).collect()
    assert [tuple(r) for r in rows] == [
        (1, "INSERT", "CREATED", None),
        (2, "INSERT", "CREATED", None),
        (1, "UPDATE_AFTER", "SHIPPED", "CREATED"),
        (1, "UPDATE_AFTER", "DELIVERED", "SHIPPED"),
    ]


def test_to_changelog_of_an_upsert_kafka_table(kafka_broker: Any) -> None:
    """Flink's UPSERT_INPUT case: an upsert source is normalized (ChangelogNormalize) before
    TO_CHANGELOG, which needs UPDATE_BEFORE rows and full deletes: the key-only tombstone of
    Bob becomes a DELETE carrying Bob's last row."""
    import json

    from confluent_kafka import Producer

    topic = kafka_broker.new_topic("to-changelog", 1)
    p = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for name, score in (("Alice", 10), ("Bob", 20), ("Alice", 30), ("Bob", None)):
        value = None if score is None else json.dumps({"name": name, "score": score}).encode()
        p.produce(topic, key=json.dumps({"name": name}).encode(), value=value)
    assert p.flush(30) == 0
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE t (name STRING, score BIGINT, PRIMARY KEY (name) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka', 'topic'='{topic}', 'properties.bootstrap.servers'='{kafka_broker.bootstrap}', "
        "'key.format'='json', 'value.format'='json', 'scan.bounded.mode'='latest-offset')"
    )
    rows = env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE t)").collect()
    assert [tuple(r) for r in rows] == [
        ("INSERT", "Alice", 10),
        ("INSERT", "Bob", 20),
        ("UPDATE_BEFORE", "Alice", 10),
        ("UPDATE_AFTER", "Alice", 30),
        ("DELETE", "Bob", 20),
    ]
