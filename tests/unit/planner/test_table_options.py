"""A bad WITH option fails when a query uses the table, pointing at the option in the
CREATE TABLE statement (line/column relative to it, caret, "Did you mean")."""

from __future__ import annotations

import pytest

from planner.errors import SqlValidationError
from planner.table_options import option_offset
from streamsql import TableEnvironment

DDL = """CREATE TABLE t (a INT) WITH (
  'connector' = 'datagen',
  'number-of-rowz' = '3'
)"""


def test_error_points_at_the_option_in_the_ddl() -> None:
    t_env = TableEnvironment.create({})
    t_env.execute_sql(DDL)  # CREATE TABLE only records the options, as in Flink
    with pytest.raises(SqlValidationError) as info:
        t_env.execute_sql("SELECT a FROM t")
    e = info.value
    assert "Unable to create a source for reading table 'default_catalog.default_database.t'." in e.message
    assert "Unsupported options found for 'datagen'." in e.message
    assert (e.line, e.column) == (3, 3)
    assert e.sql == DDL
    assert e.hint == "Did you mean 'number-of-rows'?"
    assert "\n    'number-of-rowz' = '3'\n    ^\n" in e.render()


def test_sink_errors_say_sink() -> None:
    t_env = TableEnvironment.create({})
    t_env.execute_sql("CREATE TABLE s (a INT) WITH ('connector' = 'blackhole', 'x' = '1')")
    with pytest.raises(SqlValidationError, match="Unable to create a sink for writing table"):
        t_env.execute_sql("INSERT INTO s SELECT 1")


def test_option_offset() -> None:
    sql = "WITH ('a' = '1', 'b'='2', 'a' = '3')"
    assert option_offset(sql, "b") == sql.index("'b'")
    assert option_offset(sql, "b", on_value=True) == sql.index("'2'")
    assert option_offset(sql, "a", on_value=True) == sql.index("'3'")  # the later one wins
    assert option_offset(sql, "c") is None
