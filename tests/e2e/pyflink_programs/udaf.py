"""A Python AggregateFunction that declares its own result and accumulator types."""

from pyflink.common import Row
from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col
from pyflink.table.udf import AggregateFunction, udaf


class WeightedAvg(AggregateFunction):
    def create_accumulator(self):
        return Row(0, 0)

    def get_value(self, accumulator):
        return None if accumulator[1] == 0 else accumulator[0] // accumulator[1]

    def accumulate(self, accumulator, value, weight):
        accumulator[0] += value * weight
        accumulator[1] += weight

    def retract(self, accumulator, value, weight):
        accumulator[0] -= value * weight
        accumulator[1] -= weight

    def get_result_type(self):
        return DataTypes.BIGINT()

    def get_accumulator_type(self):
        return DataTypes.ROW([DataTypes.FIELD("f0", DataTypes.BIGINT()), DataTypes.FIELD("f1", DataTypes.BIGINT())])


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    weighted_avg = udaf(WeightedAvg())
    scores = t_env.from_elements(
        [("math", 80, 1), ("math", 100, 3), ("art", 60, 2), ("art", 90, 1), ("bio", 70, 5)], ["course", "score", "w"]
    )
    scores.group_by(col("course")).select(
        col("course"), weighted_avg(col("score"), col("w")).alias("avg_score")
    ).order_by(col("course")).execute().print()
    t_env.create_temporary_function("weighted_avg", weighted_avg)
    t_env.create_temporary_view("scores", scores)
    t_env.execute_sql("SELECT weighted_avg(score, w) AS overall FROM scores").print()


if __name__ == "__main__":
    main()
