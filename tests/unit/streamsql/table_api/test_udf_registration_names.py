"""A Python function used in a Table API expression is registered under a name of its own.

The environment remembers the name it gave each function object by the object's id. An id is
reused once its object is gone, so a new function that happens to get the id of a dead one
must get a name of its own, not the dead function's (its calls would run the other function:
a table function called as a dead scalar lambda failed binding, depending on memory reuse).
"""

from __future__ import annotations

from streamsql import DataTypes, EnvironmentSettings, TableEnvironment
from streamsql.expressions import col
from streamsql.table_lowering import register_udf
from streamsql.udf import udf


def test_a_new_function_with_a_reused_id_gets_its_own_name() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t = env.from_elements([(1,), (2,)], ["a"])
    old = udf(lambda x: x + 1, result_type=DataTypes.BIGINT())
    assert t.select(old(col("a")).alias("r")).to_pandas()["r"].tolist() == [2, 3]
    new = udf(lambda x: x * 10, result_type=DataTypes.BIGINT(), name="times_ten")
    names = env.__dict__["_table_api_udfs"]
    names[id(new)] = names.pop(id(old))  # what the allocator does when `old` dies and `new` takes its id
    assert register_udf(env, new) != register_udf(env, old)
    assert t.select(new(col("a")).alias("r")).to_pandas()["r"].tolist() == [10, 20]
