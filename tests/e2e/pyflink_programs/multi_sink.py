"""One source, two print sinks in one statement set (insert_into + add)."""

from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col


def sink(identifier: str) -> TableDescriptor:
    return (
        TableDescriptor.for_connector("print")
        .schema(Schema.new_builder().column("name", DataTypes.STRING()).column("n", DataTypes.BIGINT()).build())
        .option("print-identifier", identifier)
        .build()
    )


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    source = t_env.from_elements([(1, "hi"), (2, "hello"), (3, "hey")], ["n", "name"])
    t_env.create_temporary_table("first_sink", sink("first"))
    t_env.create_temporary_table("second_sink", sink("second"))

    statement_set = t_env.create_statement_set()
    statement_set.add_insert("first_sink", source.where(col("n") < 3).select(col("name"), col("n")))
    statement_set.add(source.where(col("n") >= 2).select(col("name"), col("n") * 10).insert_into("second_sink"))
    statement_set.execute().wait()


if __name__ == "__main__":
    main()
