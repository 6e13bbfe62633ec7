"""Processing JSON strings with json_value, a Python UDF, alias and a print sink."""

import json

from pyflink.table import DataTypes, EnvironmentSettings, Schema, TableDescriptor, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import udf

ORDERS = [
    (1, '{"customer": "ann", "amount": 12, "shipping": {"country": "NL", "express": true}}'),
    (2, '{"customer": "bob", "amount": 7, "shipping": {"country": "DE", "express": false}}'),
    (3, '{"customer": "cyd", "amount": 30, "shipping": {"country": "NL", "express": false}}'),
]


@udf(result_type=DataTypes.STRING())
def add_tax(order: str) -> str:
    data = json.loads(order)
    data["amount"] = data["amount"] * 2
    return json.dumps(data, sort_keys=True)


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    orders = t_env.from_elements(ORDERS, ["id", "doc"])
    t_env.create_temporary_table(
        "parsed",
        TableDescriptor.for_connector("print")
        .schema(
            Schema.new_builder()
            .column("id", DataTypes.BIGINT())
            .column("customer", DataTypes.STRING())
            .column("amount", DataTypes.INT())
            .column("country", DataTypes.STRING())
            .build()
        )
        .build(),
    )
    parsed = orders.select(
        col("id"),
        col("doc").json_value("$.customer", DataTypes.STRING()),
        col("doc").json_value("$.amount", DataTypes.INT()),
        col("doc").json_value("$.shipping.country", DataTypes.STRING()),
    ).alias("id", "customer", "amount", "country")
    parsed.execute_insert("parsed").wait()

    taxed = orders.select(col("id"), add_tax(col("doc")).alias("doc"))
    taxed.execute().print()


if __name__ == "__main__":
    main()
