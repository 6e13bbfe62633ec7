"""Batch word count with a table function given to flat_map (a PyFlink program)."""

from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.udf import udtf

LINES = [
    "the quick brown fox",
    "jumps over the lazy dog",
    "The dog sleeps",
]


@udtf(result_types=[DataTypes.STRING()])
def split(line: Row):
    for word in line[0].split():
        yield Row(word)


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("parallelism.default", "1")
    source = t_env.from_elements([(line,) for line in LINES], ["line"])
    counts = (
        source.flat_map(split)
        .alias("word")
        .group_by(col("word"))
        .select(col("word"), lit(1).count.alias("count"))
        .order_by(col("word"))
    )
    counts.execute().print()


if __name__ == "__main__":
    main()
