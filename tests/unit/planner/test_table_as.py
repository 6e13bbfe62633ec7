"""planner/table_as.py: how CTAS / RTAS merge the declared columns with the query's schema
(Flink's MergeTableAsUtil rules), without running anything."""

from __future__ import annotations

import pytest

from planner.errors import SqlValidationError
from planner.parse import parse_statement
from planner.statements import CreateTable
from planner.table_as import merge_table_as
from runtime import types as rt
from runtime.types import Field

# The query's schema: `SELECT id, name, amount FROM ...` with a nullable id.
QUERY = (Field("id", rt.INT()), Field("name", rt.STRING()), Field("amount", rt.DOUBLE()))
AS = " WITH ('connector' = 'blackhole') AS SELECT id, name, amount FROM src"


def _columns(create: str, fields: tuple[Field, ...] = QUERY) -> list[tuple[str, str, str | None]]:
    stmt = parse_statement(create + AS)
    assert isinstance(stmt, CreateTable)
    return [(c.name, c.kind, None if c.type is None else str(c.type)) for c in merge_table_as(stmt, fields)]


def test_no_column_list_takes_the_query_schema_in_order() -> None:
    assert [c[0] for c in _columns("CREATE TABLE t")] == ["id", "name", "amount"]


def test_names_alone_reorder_the_query_columns() -> None:
    assert [c[0] for c in _columns("CREATE TABLE t (amount, id, name)")] == ["amount", "id", "name"]


def test_declared_only_columns_come_first_and_a_declared_type_overrides_the_query() -> None:
    cols = _columns("CREATE TABLE t (extra STRING, amount DECIMAL(10, 2), c AS UPPER(extra))")
    assert [c[0] for c in cols] == ["extra", "c", "id", "name", "amount"]
    assert cols[0][1] == "physical" and cols[1][1] == "computed"
    assert "DECIMAL(10, 2)" in str(cols[4][2])


@pytest.mark.parametrize(
    ("create", "message"),
    [
        ("CREATE TABLE t (id, name)", "Expected 3 but got 2"),
        ("CREATE TABLE t (id, name, nope)", "Column 'nope' not found in the source schema."),
        ("CREATE TABLE t (name AS UPPER('x'))", "A column named 'name' already exists in the source schema."),
        ("CREATE TABLE t (PRIMARY KEY (id) NOT ENFORCED)", "Invalid primary key 'PK_id'. Column 'id' is nullable."),
    ],
)
def test_refusals_are_validation_errors(create: str, message: str) -> None:
    with pytest.raises(SqlValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _columns(create)


def test_a_primary_key_on_a_not_null_query_column_is_accepted() -> None:
    fields = (Field("id", rt.INT().with_nullable(False)), *QUERY[1:])
    assert [c[0] for c in _columns("CREATE TABLE t (PRIMARY KEY (id) NOT ENFORCED)", fields)] == [
        "id",
        "name",
        "amount",
    ]
