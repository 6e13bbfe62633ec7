"""Clicks per user and minute with the Table API (the same query as clicks_per_minute.sql).

Run from the repository root:  python examples/table_api_windowed.py [--batch]
"""

from __future__ import annotations

import sys
from pathlib import Path

from streamsql import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from streamsql.expressions import col, lit
from streamsql.window import Tumble

DATA = Path(__file__).resolve().parent / "data" / "clicks.csv"


def main(batch: bool = False) -> None:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.create_temporary_table(
        "clicks",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("user_name", DataTypes.STRING())
            .column("url", DataTypes.STRING())
            .column("ts", DataTypes.TIMESTAMP(3))
            .watermark("ts", "ts - INTERVAL '5' SECOND")
            .build()
        )
        .option("path", str(DATA))
        .format("csv")
        .build(),
    )
    clicks = t_env.from_path("clicks")
    per_minute = (
        clicks.window(Tumble.over(lit(1).minutes).on(col("ts")).alias("w"))
        .group_by(col("w"), col("user_name"))
        .select(
            col("w").start.alias("window_start"),
            col("w").end.alias("window_end"),
            col("user_name"),
            col("url").count.alias("clicks"),
            col("url").count.distinct.alias("pages"),
        )
    )
    print(per_minute.explain())
    per_minute.execute().print()


if __name__ == "__main__":
    main(batch="--batch" in sys.argv)
