"""Tumbling, sliding, session and over windows through the Table API, event time."""

import os
import tempfile

from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import UNBOUNDED_RANGE, col, lit
from pyflink.table.window import Over, Session, Slide, Tumble

EVENTS = """1970-01-01 00:00:01,Alice,110.10
1970-01-01 00:00:04,Bob,30.20
1970-01-01 00:00:03,Alice,20.00
1970-01-01 00:00:02,Bob,53.10
1970-01-01 00:00:05,Alice,13.10
1970-01-01 00:00:03,Bob,3.10
1970-01-01 00:00:07,Bob,16.10
1970-01-01 00:00:10,Alice,20.10
"""


def main() -> None:
    data_dir = tempfile.mkdtemp()
    with open(os.path.join(data_dir, "events.csv"), "w") as f:
        f.write(EVENTS)
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_table(
        "events",
        TableDescriptor.for_connector("filesystem")
        .schema(
            Schema.new_builder()
            .column("ts", DataTypes.TIMESTAMP(3))
            .column("name", DataTypes.STRING())
            .column("price", DataTypes.DECIMAL(10, 2))
            .watermark("ts", "ts - INTERVAL '3' SECOND")
            .build()
        )
        .option("path", data_dir)
        .format("csv")
        .build(),
    )
    events = t_env.from_path("events")

    print("tumble")
    events.window(Tumble.over(lit(5).seconds).on(col("ts")).alias("w")).group_by(col("name"), col("w")).select(
        col("name"), col("price").sum.alias("total"), col("w").start.alias("w_start"), col("w").end.alias("w_end")
    ).execute().print()

    print("slide")
    events.window(Slide.over(lit(4).seconds).every(lit(2).seconds).on(col("ts")).alias("w")).group_by(
        col("name"), col("w")
    ).select(col("name"), col("price").sum.alias("total"), col("w").end.alias("w_end")).execute().print()

    print("session")
    events.window(Session.with_gap(lit(2).seconds).on(col("ts")).alias("w")).group_by(col("name"), col("w")).select(
        col("name"), col("price").count.alias("n"), col("w").start.alias("w_start"), col("w").end.alias("w_end")
    ).execute().print()

    print("over")
    events.over_window(Over.partition_by(col("name")).order_by(col("ts")).preceding(UNBOUNDED_RANGE).alias("w")).select(
        col("name"), col("ts"), col("price").sum.over(col("w")).alias("running")
    ).execute().print()


if __name__ == "__main__":
    main()
