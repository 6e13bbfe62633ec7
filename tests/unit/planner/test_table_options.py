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


# ---------------------------------------------------------------------- OPTIONS hint
def test_options_hint_overrides_the_table_options_for_one_query(tmp_path) -> None:  # noqa: ANN001
    """Flink's dynamic table options (hints.md): `t /*+ OPTIONS('k'='v') */` reads the table
    with the hint's options over its own, in this query only; a bad key fails at the hint."""
    (tmp_path / "bad.csv").write_text("1\nx\n3\n")
    t_env = TableEnvironment.create({"execution.runtime-mode": "batch"})
    t_env.execute_sql(
        f"CREATE TABLE t (a INT) WITH ('connector'='filesystem', 'path'='{tmp_path / 'bad.csv'}', 'format'='csv')"
    )
    rows = t_env.execute_sql("SELECT a FROM t /*+ OPTIONS('csv.ignore-parse-errors'='true') */").collect()
    assert [r[0] for r in rows] == [1, None, 3]
    with pytest.raises(Exception, match="NumberFormatException"):  # the table's own options again
        list(t_env.execute_sql("SELECT a FROM t").collect())
    with pytest.raises(SqlValidationError, match="Unsupported options found for 'filesystem'") as info:
        t_env.execute_sql("SELECT a FROM t /*+ OPTIONS('csv.ignore-parse-errorz'='true') */")
    assert (info.value.line, info.value.column) == (1, 15)
    assert info.value.hint == "Did you mean 'csv.ignore-parse-errors'?"


def test_options_hint_on_the_insert_target(tmp_path) -> None:  # noqa: ANN001
    t_env = TableEnvironment.create({"execution.runtime-mode": "batch"})
    t_env.execute_sql(
        f"CREATE TABLE s (a INT) WITH ('connector'='filesystem', 'path'='{tmp_path / 'one'}', 'format'='csv')"
    )
    t_env.execute_sql(f"INSERT INTO s /*+ OPTIONS('path'='{tmp_path / 'two'}') */ SELECT 1").wait()
    assert (tmp_path / "two").is_dir() and not (tmp_path / "one").exists()
    with pytest.raises(SqlValidationError, match="Unable to create a sink for writing table"):
        t_env.execute_sql("INSERT INTO s /*+ OPTIONS('nope'='1') */ SELECT 1")
