"""POSITION(needle IN hay): sqlglot keeps the haystack in `this`; the binder must hand the
function (needle, hay), as LOCATE takes them (a swapped order returned 0 for a hit)."""

from __future__ import annotations

from streamsql import EnvironmentSettings, TableEnvironment


def test_position_finds_the_needle_in_the_haystack() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    sql = (
        "SELECT POSITION('2' IN '12-34'), POSITION('3' IN 'a3'), POSITION('x' IN 'ab'),"
        " POSITION('' IN 'ab'), POSITION('a' IN CAST(NULL AS STRING)), LOCATE('2', '12-34')"
    )
    rows = [tuple(r) for r in env.execute_sql(sql).collect()]
    assert rows == [(2, 2, 0, 1, None, 2)]
