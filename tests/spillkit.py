"""What the BATCH spill tests (tests/unit/runtime/operators/test_*_spill.py) share: an
environment with the settings under test (a tiny `taskmanager.memory.managed.size`, or none
for the in-memory result to compare with), `fail_last`, a UDF that fails the job at a given
row (after the operator spilled, to check it cleans up), and a query's rows in an order-free
form (spilling changes the order of output rows, not the rows)."""

from __future__ import annotations

from collections.abc import Mapping

from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.udf import udf


class FailAt:
    """`fail_last(id)`: `id` as is, and a ValueError at `row` (the input's last)."""

    def __init__(self, row: int) -> None:
        self.row = row

    def __call__(self, i: int) -> int:
        if i == self.row:
            raise ValueError("boom at the last row")
        return i


def batch_env(settings: Mapping[str, str], fail_at: int | None = None) -> TableEnvironment:
    """A BATCH environment with `settings` SET (and `fail_last` failing at row `fail_at`)."""
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    for k, v in settings.items():
        env.execute_sql(f"SET '{k}' = '{v}'")
    if fail_at is not None:
        env.create_temporary_function("fail_last", udf(FailAt(fail_at), result_type=DataTypes.BIGINT()))
    return env


def sorted_rows(env: TableEnvironment, query: str) -> list[tuple[object, ...]]:
    """The query's rows, sorted (NULLs last, values by their text)."""
    table = env.execute_sql(query).to_arrow()
    rows = [tuple(r.values()) for r in table.to_pylist()]
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r))
