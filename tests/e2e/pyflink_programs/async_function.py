"""An async scalar function: rows of a batch awaited concurrently, results in input order."""

import asyncio

from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
from pyflink.table.udf import AsyncScalarFunction, udf


class SlowLookup(AsyncScalarFunction):
    def open(self, function_context):
        self.in_flight = 0
        self.most_in_flight = 0

    async def eval(self, key):
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.02 * (5 - key % 5))  # later keys answer sooner
        self.in_flight -= 1
        return f"value-{key}"


def main() -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.get_config().set("table.exec.async-scalar.max-concurrent-operations", "4")
    lookup = SlowLookup()
    t_env.create_temporary_function("lookup", udf(lookup, result_type=DataTypes.STRING()))
    keys = t_env.from_elements([(k,) for k in range(1, 11)], ["k"])
    t_env.create_temporary_view("keys", keys)
    t_env.execute_sql("SELECT k, lookup(k) AS v FROM keys").print()
    print("concurrent calls:", lookup.most_in_flight)


if __name__ == "__main__":
    main()
