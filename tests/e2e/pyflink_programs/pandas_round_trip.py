"""pandas in and out: from_pandas, Table operations, to_pandas."""

import pandas as pd
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    pdf = pd.DataFrame({"city": ["Oslo", "Lima", "Oslo", "Kyiv"], "temp": [3.5, 18.0, -1.5, 7.25]})
    table = t_env.from_pandas(
        pdf, DataTypes.ROW([DataTypes.FIELD("city", DataTypes.STRING()), DataTypes.FIELD("temp", DataTypes.DOUBLE())])
    )
    per_city = table.group_by(col("city")).select(col("city"), col("temp").avg.alias("avg_temp"), col("temp").count)
    result = per_city.to_pandas().sort_values("city").reset_index(drop=True)
    print(list(result.columns))
    print(result.to_string(index=False))
    print(table.where(col("temp") > 5).to_pandas().shape)


if __name__ == "__main__":
    main()
