"""ANALYZE TABLE's statistics, read back through the catalog API (PyFlink's names): the
values per type as Flink's ANALYZE TABLE stores them, per partition, merged column
statistics, and kept by the persistent catalog across a restart."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from runtime.types import INT, STRING, TIMESTAMP
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.analyze_table import ColumnAccumulator
from streamsql.catalog import CatalogException, CatalogPartitionSpec, ObjectPath
from streamsql.catalog_statistics import (
    CatalogColumnStatistics,
    CatalogColumnStatisticsDataBinary,
    CatalogColumnStatisticsDataBoolean,
    CatalogColumnStatisticsDataDate,
    CatalogColumnStatisticsDataDouble,
    CatalogColumnStatisticsDataLong,
    CatalogColumnStatisticsDataString,
    CatalogTableStatistics,
    Date,
)

PATH = ObjectPath("default_database", "t")


def _batch_env() -> TableEnvironment:
    return TableEnvironment.create(EnvironmentSettings.in_batch_mode())


def test_statistics_of_every_kind_as_flink_stores_them(tmp_path: Path) -> None:
    env = _batch_env()
    env.execute_sql(
        "CREATE TABLE t (b BOOLEAN, i INT, s STRING, d DATE, ts TIMESTAMP(3), ltz TIMESTAMP_LTZ(3), tm TIME, "
        "f FLOAT, dec DECIMAL(10, 2), bin BYTES, arr ARRAY<INT>, c AS i + 1) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/t', 'format' = 'parquet')"
    )
    env.execute_sql(
        "INSERT INTO t VALUES "
        "(TRUE, 1, 'ab', DATE '2024-01-01', TIMESTAMP '2024-01-01 00:00:01.500', TO_TIMESTAMP_LTZ(1500, 3), "
        "TIME '01:00:00', CAST(1.5 AS FLOAT), 2.25, X'01', ARRAY[1]), "
        "(FALSE, 2, 'abcd', DATE '2024-01-03', TIMESTAMP '1969-12-31 23:59:59.500', TO_TIMESTAMP_LTZ(-1500, 3), "
        "TIME '00:00:01', CAST(-1.5 AS FLOAT), 3.50, X'0102', ARRAY[2]), "
        "(CAST(NULL AS BOOLEAN), 2, CAST(NULL AS STRING), CAST(NULL AS DATE), CAST(NULL AS TIMESTAMP(3)), "
        "CAST(NULL AS TIMESTAMP_LTZ(3)), CAST(NULL AS TIME), CAST(NULL AS FLOAT), CAST(NULL AS DECIMAL(10, 2)), "
        "CAST(NULL AS BYTES), CAST(NULL AS ARRAY<INT>))"
    ).wait()
    catalog = env.get_catalog("default_catalog")
    assert catalog.get_table_statistics(PATH) == CatalogTableStatistics(-1, -1, -1, -1)  # unknown
    assert catalog.get_table_column_statistics(PATH).get_column_statistics_data() == {}

    env.execute_sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS")

    stats = catalog.get_table_statistics(PATH)
    assert (stats.get_row_count(), stats.get_field_count(), stats.get_total_size(), stats.get_raw_data_size()) == (
        3,
        -1,
        -1,
        -1,
    )
    data = catalog.get_table_column_statistics(PATH).get_column_statistics_data()
    assert data == {
        "b": CatalogColumnStatisticsDataBoolean(1, 1, 1),
        "i": CatalogColumnStatisticsDataLong(1, 2, 2, 0),
        "s": CatalogColumnStatisticsDataString(4, 3.0, 2, 1),
        "d": CatalogColumnStatisticsDataDate(Date(19723), Date(19725), 2, 1),
        # TIMESTAMP: epoch seconds, floored as Java's toEpochSecond; LTZ: epoch millis
        "ts": CatalogColumnStatisticsDataLong(-1, 1704067201, 2, 1),
        "ltz": CatalogColumnStatisticsDataLong(-1500, 1500, 2, 1),
        # TIME: nanoseconds of the day
        "tm": CatalogColumnStatisticsDataLong(1_000_000_000, 3_600_000_000_000, 2, 1),
        "f": CatalogColumnStatisticsDataDouble(-1.5, 1.5, 2, 1),
        "dec": CatalogColumnStatisticsDataDouble(2.25, 3.5, 2, 1),
        "bin": CatalogColumnStatisticsDataBinary(None, None, 1),
        # ARRAY: no statistics kind (as in Flink); the computed column is not physical
    }
    # Java's getters, as PyFlink users reach the statistics data
    assert (data["i"].getMin(), data["i"].getMax(), data["i"].getNdv(), data["i"].getNullCount()) == (1, 2, 2, 0)
    assert data["d"].getMax().getDaysSinceEpoch() == 19725
    assert (data["s"].getMaxLength(), data["s"].getAvgLength()) == (4, 3.0)
    assert (data["b"].getTrueCount(), data["b"].getFalseCount()) == (1, 1)


def test_column_statistics_are_merged_and_follow_the_table(tmp_path: Path) -> None:
    env = _batch_env()
    env.execute_sql(
        f"CREATE TABLE t (id INT, name STRING) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/t', "
        "'format' = 'csv')"
    )
    env.execute_sql("INSERT INTO t VALUES (1, 'a'), (2, 'bb')").wait()
    catalog = env.get_catalog("default_catalog")
    env.execute_sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS id")
    env.execute_sql("INSERT INTO t VALUES (3, 'ccc')").wait()
    env.execute_sql("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS name")
    assert catalog.get_table_statistics(PATH).get_row_count() == 3
    # id keeps the statistics of the first run; name gets the new ones
    assert catalog.get_table_column_statistics(PATH).get_column_statistics_data() == {
        "id": CatalogColumnStatisticsDataLong(1, 2, 2, 0),
        "name": CatalogColumnStatisticsDataString(3, 2.0, 3, 0),
    }
    env.execute_sql("ALTER TABLE t RENAME TO t2")
    assert catalog.get_table_statistics(ObjectPath("default_database", "t2")).get_row_count() == 3
    env.execute_sql("DROP TABLE t2")
    env.execute_sql(
        f"CREATE TABLE t2 (id INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/x', 'format' = 'csv')"
    )
    assert catalog.get_table_statistics(ObjectPath("default_database", "t2")).get_row_count() == -1
    with pytest.raises(CatalogException, match="does not exist"):
        catalog.get_table_statistics(ObjectPath("default_database", "nope"))


def test_partitions_get_their_own_statistics(tmp_path: Path) -> None:
    env = _batch_env()
    env.execute_sql(
        "CREATE TABLE t (v INT, dt STRING, h INT) PARTITIONED BY (dt, h) "
        f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/t', 'format' = 'csv')"
    )
    env.execute_sql("INSERT INTO t VALUES (1, 'a', 1), (2, 'a', 1), (3, 'a', 2), (4, 'b', 1)").wait()
    env.execute_sql("ANALYZE TABLE t PARTITION (dt = 'a', h) COMPUTE STATISTICS FOR COLUMNS v")
    catalog = env.get_catalog("default_catalog")

    def stats(dt: str, h: str) -> tuple[int | None, dict]:
        spec = CatalogPartitionSpec({"dt": dt, "h": h})
        return (
            catalog.get_partition_statistics(PATH, spec).get_row_count(),
            catalog.get_partition_column_statistics(PATH, spec).get_column_statistics_data(),
        )

    assert stats("a", "1") == (2, {"v": CatalogColumnStatisticsDataLong(1, 2, 2, 0)})
    assert stats("a", "2") == (1, {"v": CatalogColumnStatisticsDataLong(3, 3, 1, 0)})
    assert stats("b", "1") == (-1, {})  # not targeted
    assert catalog.get_table_statistics(PATH).get_row_count() == -1  # per partition only
    env.execute_sql("ANALYZE TABLE t PARTITION (dt, h) COMPUTE STATISTICS")
    assert [
        s.get_row_count()
        for s in catalog.bulk_get_partition_statistics(
            PATH, [CatalogPartitionSpec({"dt": "a", "h": "1"}), CatalogPartitionSpec({"dt": "b", "h": "1"})]
        )
    ] == [2, 1]


def test_the_persistent_catalog_keeps_statistics_across_a_restart(tmp_path: Path) -> None:
    ddl = f"CREATE CATALOG p WITH ('type' = 'sqlite', 'path' = '{tmp_path}/catalog.db')"
    env = _batch_env()
    env.execute_sql(ddl)
    env.execute_sql(
        f"CREATE TABLE p.`default`.t (id BIGINT, name STRING) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path}/t', 'format' = 'parquet')"
    )
    env.execute_sql("INSERT INTO p.`default`.t VALUES (5, 'a'), (7, 'b'), (CAST(NULL AS BIGINT), 'c')").wait()
    env.execute_sql("ANALYZE TABLE p.`default`.t COMPUTE STATISTICS FOR COLUMNS id")

    restarted = _batch_env()
    restarted.execute_sql(ddl)
    catalog = restarted.get_catalog("p")
    path = ObjectPath("default", "t")
    assert catalog.get_table_statistics(path).get_row_count() == 3
    assert catalog.get_table_column_statistics(path).get_column_statistics_data() == {
        "id": CatalogColumnStatisticsDataLong(5, 7, 2, 1)
    }
    # set through the API, read by the other process
    catalog.alter_table_statistics(path, CatalogTableStatistics(10, 1, 100, 200), False)
    catalog.alter_table_column_statistics(
        path, CatalogColumnStatistics({"id": CatalogColumnStatisticsDataLong(0, 9, 10, 0)}), False
    )
    first = env.get_catalog("p")
    assert first.get_table_statistics(path) == CatalogTableStatistics(10, 1, 100, 200)
    assert first.get_table_column_statistics(path).get_column_statistics_data()["id"].getMax() == 9


def test_column_accumulator_merges_distinct_values_across_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    import streamsql.analyze_table as at

    monkeypatch.setattr(at, "_DISTINCT_MERGE_AT", 3)  # force the periodic de-duplication
    ints = ColumnAccumulator(INT())
    strings = ColumnAccumulator(STRING())
    stamps = ColumnAccumulator(TIMESTAMP(6))
    for chunk in ([1, 2, None], [2, 3, 4], [4, 4, None], [9, 1, 2]):
        ints.add(pa.array(chunk, pa.int32()))
        strings.add(pa.array([None if v is None else "x" * v for v in chunk], pa.string()))
        stamps.add(pa.array([None if v is None else v * 1_500_000 for v in chunk], pa.timestamp("us")))
    assert ints.result() == CatalogColumnStatisticsDataLong(1, 9, 5, 2)
    assert strings.result() == CatalogColumnStatisticsDataString(9, 32 / 10, 5, 2)
    assert stamps.result() == CatalogColumnStatisticsDataLong(1, 13, 5, 2)  # 1.5 s .. 13.5 s, floored
    empty = ColumnAccumulator(STRING())
    empty.add(pa.array([None, None], pa.string()))
    assert empty.result() == CatalogColumnStatisticsDataString(None, None, 0, 2)
