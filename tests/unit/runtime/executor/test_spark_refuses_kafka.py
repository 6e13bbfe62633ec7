"""The Spark runner refuses Kafka tables at planning time, saying why: Spark's Kafka source
and sink need the spark-sql-kafka-0-10 jar, which pyspark does not include."""

from __future__ import annotations

import pytest

from streamsql import EnvironmentSettings, TableEnvironment


@pytest.mark.parametrize("connector", ["kafka", "upsert-kafka"])
def test_kafka_tables_are_refused_with_the_reason(connector: str) -> None:
    from runtime.executor.spark.capabilities import check_graph
    from runtime.executor.spark.types import SparkUnsupportedError

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    fmt = (
        "'format' = 'json', 'scan.startup.mode' = 'earliest-offset'"
        if connector == "kafka"
        else "'key.format' = 'json', 'value.format' = 'json'"
    )
    env.execute_sql(
        f"CREATE TABLE k (id INT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = '{connector}', "
        f"'topic' = 't', 'properties.bootstrap.servers' = '127.0.0.1:1', {fmt})"
    )
    env.execute_sql("CREATE TABLE out_t (id INT, v STRING) WITH ('connector' = 'blackhole')")
    sql = "INSERT INTO out_t SELECT id, v FROM k" if connector == "kafka" else "INSERT INTO k SELECT 1, 'a'"
    (stmt,) = env.parse(sql)
    graph = env._planner().plan_query(stmt).graph  # noqa: SLF001 - planning only, no Spark
    with pytest.raises(SparkUnsupportedError, match=r"spark-sql-kafka-0-10 jar\), which pyspark does not include"):
        check_graph(graph)
