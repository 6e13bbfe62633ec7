"""An updating result into an `upsert-kafka` sink keyed like its updates: the planner leaves
the -U rows out (planner/changelog.py `require_update_before`, as Flink plans it), so the
topic gets one record per change and no tombstone for an update, which a -U arriving in
another batch than its +U used to write. In process (TableEnvironment), against the session's
tansu broker, small data.
"""

from __future__ import annotations

import json
from pathlib import Path

from servers.kafka import KafkaBroker

from streamsql import EnvironmentSettings, TableEnvironment


def test_group_by_into_upsert_kafka_writes_no_update_before(kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    rows = [("a", 1), ("b", 2), ("a", 3), ("a", 4), ("b", 5)]
    (tmp_path / "in.json").write_text("".join(json.dumps({"grp": g, "v": v}) + "\n" for g, v in rows))
    out = kafka_broker.new_topic("upsert-no-ub", 1)
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("table.exec.source.batch-rows", "1")  # each row's change on its own
    env.execute_sql(
        f"CREATE TABLE src (grp STRING, v BIGINT) WITH ('connector'='filesystem','path'='{tmp_path / 'in.json'}',"
        "'format'='json')"
    )
    env.execute_sql(
        f"CREATE TABLE totals (grp STRING, n BIGINT, s BIGINT, PRIMARY KEY (grp) NOT ENFORCED) WITH ("
        f"'connector'='upsert-kafka','topic'='{out}','properties.bootstrap.servers'='{kafka_broker.bootstrap}',"
        "'key.format'='json','value.format'='json')"
    )
    insert = "INSERT INTO totals SELECT grp, COUNT(*), SUM(v) FROM src GROUP BY grp"
    plan = env.explain_sql(insert, "CHANGELOG_MODE")
    assert (
        "GroupAggregate(groupBy=[grp], select=[grp, COUNT(*) AS EXPR$1, SUM(v) AS EXPR$2], changelogMode=[I,UA])"
        in (plan)
    )
    env.execute_sql(insert).wait()
    records = [
        (json.loads(m.key())["grp"], None if m.value() is None else json.loads(m.value()))
        for m in kafka_broker.read(out, 1)
    ]
    assert records == [
        ("a", {"grp": "a", "n": 1, "s": 1}),
        ("b", {"grp": "b", "n": 1, "s": 2}),
        ("a", {"grp": "a", "n": 2, "s": 4}),
        ("a", {"grp": "a", "n": 3, "s": 8}),
        ("b", {"grp": "b", "n": 2, "s": 7}),
    ]
