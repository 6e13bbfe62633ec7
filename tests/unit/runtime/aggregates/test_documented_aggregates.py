"""The aggregate functions' examples and stated rules on Flink 2.3's function page: LISTAGG's
default separator, ARRAY_AGG's NULL handling, JSON_ARRAYAGG / JSON_OBJECTAGG's ON NULL
defaults, and JSON_OBJECTAGG's "keys must be unique" (Flink's JsonObjectAggFunction fails
the job on a key it already holds)."""

from __future__ import annotations

import pytest

from runtime.errors import JobError
from streamsql import EnvironmentSettings, TableEnvironment

ORDERS = (
    "SELECT * FROM (VALUES ('Apple', 2, 1), ('Banana', 17, 2), ('Orange', 0, 3), "
    "(CAST(NULL AS STRING), 5, 4)) AS t(product, cnt, id)"
)


@pytest.fixture(scope="module")
def env() -> TableEnvironment:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(f"CREATE TEMPORARY VIEW orders AS {ORDERS}")
    return env


@pytest.mark.parametrize(
    ("agg", "want"),
    [
        # the page's examples
        ("JSON_OBJECTAGG(KEY product VALUE cnt)", '{"Apple":2,"Banana":17,"Orange":0}'),
        ("JSON_ARRAYAGG(product)", '["Apple","Banana","Orange"]'),
        # defaults the page states: JSON_ARRAYAGG is ABSENT ON NULL, JSON_OBJECTAGG NULL ON NULL
        ("JSON_ARRAYAGG(CASE WHEN id = 2 THEN NULL ELSE product END NULL ON NULL)", '["Apple",null,"Orange"]'),
        (
            "JSON_OBJECTAGG(KEY product VALUE CASE WHEN id = 2 THEN NULL ELSE cnt END)",
            '{"Apple":2,"Banana":null,"Orange":0}',
        ),
        ("LISTAGG(product)", "Apple,Banana,Orange"),
        ("LISTAGG(product, '|')", "Apple|Banana|Orange"),
    ],
)
def test_documented_aggregate(env: TableEnvironment, agg: str, want: str) -> None:
    (row,) = env.execute_sql(f"SELECT {agg} FROM orders WHERE product IS NOT NULL").collect()
    assert row[0] == want


def test_array_agg_respects_nulls_unless_told() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(f"CREATE TEMPORARY VIEW orders AS {ORDERS}")
    (row,) = env.execute_sql(
        "SELECT ARRAY_AGG(product), ARRAY_AGG(product IGNORE NULLS), ARRAY_AGG(cnt) FILTER (WHERE id > 10) FROM orders"
    ).collect()
    assert tuple(row) == (["Apple", "Banana", "Orange", None], ["Apple", "Banana", "Orange"], None)


@pytest.mark.parametrize(
    "agg",
    [
        "JSON_OBJECTAGG(KEY 'k' VALUE cnt)",
        # a NULL value for a held key fails too: Flink checks the key before the value
        "JSON_OBJECTAGG(KEY 'k' VALUE CASE WHEN id = 4 THEN NULL ELSE cnt END ABSENT ON NULL)",
    ],
)
def test_json_objectagg_fails_on_a_repeated_key(env: TableEnvironment, agg: str) -> None:
    with pytest.raises(JobError, match="Key 'k' is already present. Duplicate keys are not allowed in JSON_OBJECTAGG"):
        list(env.execute_sql(f"SELECT {agg} FROM orders").collect())


def test_json_objectagg_key_dropped_absent_on_null_may_come_again(env: TableEnvironment) -> None:
    """ABSENT ON NULL does not hold the key of a NULL value, so the key may come again."""
    (row,) = env.execute_sql(
        "SELECT JSON_OBJECTAGG(KEY 'k' VALUE CASE WHEN id < 4 THEN NULL ELSE cnt END ABSENT ON NULL) FROM orders"
    ).collect()
    assert row[0] == '{"k":5}'
