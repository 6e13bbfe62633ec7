"""Python UDFs from the Table API and from SQL: a scalar function, a vectorized (pandas)
function and a table function, over in-memory data.

Run from the repository root:  python examples/python_udf.py
"""

from __future__ import annotations

from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.expressions import col
from streamsql.udf import udf, udtf


@udf(result_type=DataTypes.STRING())
def domain(email: str) -> str:
    return email.split("@", 1)[1]


@udf(result_type=DataTypes.DOUBLE(), func_type="pandas")
def with_vat(amount):  # noqa: ANN001, ANN201 - a pandas Series in, a Series out
    return amount * 1.19


@udtf(result_types=[DataTypes.STRING()])
def tags(text: str):  # noqa: ANN201 - a generator of rows
    for tag in text.split(","):
        yield (tag.strip(),)


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    orders = t_env.from_elements(
        [("ann@example.com", 10.0, "new, promo"), ("bo@test.org", 25.5, "repeat"), ("cy@example.com", 7.25, "promo")],
        ["email", "amount", "labels"],
    )
    # Table API: call the UDF objects on expressions.
    enriched = orders.select(domain(col("email")).alias("domain"), with_vat(col("amount")).alias("gross"))
    enriched.execute().print()
    tagged = (
        orders.join_lateral(tags(col("labels")).alias("tag"))
        .group_by(col("tag"))
        .select(col("tag"), col("amount").sum.alias("total"))
    )
    tagged.execute().print()
    # SQL: register the same function by name.
    t_env.create_temporary_function("domain", domain)
    t_env.create_temporary_view("orders", orders)
    t_env.execute_sql("SELECT domain(email) AS d, COUNT(*) AS n FROM orders GROUP BY domain(email)").print()


if __name__ == "__main__":
    main()
