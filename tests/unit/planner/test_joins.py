"""Planning of regular joins, semi/anti joins and subqueries: keys vs residual predicates,
ON vs WHERE pushdown, outer-join nullability, changelog modes, NOT IN's NULL semantics,
scalar-subquery decorrelation; plus end-to-end runs in both modes (self-join, multi-way
join, RIGHT join, NOT IN, the scalar subquery row check)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError, UnsupportedSqlError
from planner.parse import parse_script
from planner.statements import CreateTable, Query
from runtime.errors import JobError
from runtime.graph import JobGraph, Node
from streamsql import EnvironmentSettings, TableEnvironment

DDL = """
CREATE TABLE o (oid INT, cid INT, amount INT) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE c (cid INT, name STRING, country STRING) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
CREATE TABLE nn (cid INT NOT NULL, name STRING) WITH ('connector' = 'filesystem', 'path' = 'n.csv', 'format' = 'csv');
"""


def _plan(sql: str, mode: str = "streaming") -> tuple[JobGraph, Any]:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": mode})
    for st in parse_script(DDL + sql):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Query):
            pq = planner.plan_query(st)
            return pq.graph, pq
    raise AssertionError("no query")


def _joins(graph: JobGraph) -> list[Node]:
    return [n for n in graph.nodes if n.operator == "Join"]


def test_comma_join_with_where_becomes_an_equi_join() -> None:
    graph, pq = _plan("SELECT o.oid, c.name FROM o, c WHERE o.cid = c.cid AND o.amount > c.cid")
    (j,) = _joins(graph)
    assert j.params.join_type == "INNER"
    assert (j.params.left_keys, j.params.right_keys) == ((1,), (0,))
    assert j.params.condition is not None  # the non-equi part stays a residual
    assert pq.changelog_mode == "I"


def test_left_join_on_vs_where() -> None:
    graph, pq = _plan(
        "SELECT o.oid, c.name FROM o LEFT JOIN c ON o.cid = c.cid AND c.country <> 'FR' AND o.amount > 0 "
        "WHERE o.oid > 1"
    )
    (j,) = _joins(graph)
    assert j.params.join_type == "LEFT"
    # the right-only ON conjunct moved below the join; the left-only one must stay in ON
    assert "greater_than" in str(j.params.condition)
    assert "not_equals" not in str(j.params.condition)
    calcs = [n for n in graph.nodes if n.operator == "Calc" and n.params.condition is not None]
    assert any("not_equals" in str(n.params.condition) for n in calcs)
    assert pq.changelog_mode == "I,UB,UA,D"
    # the right side's columns are nullable in the output
    assert pq.schema[1].type.nullable


def test_full_outer_join_makes_both_sides_nullable() -> None:
    _, pq = _plan("SELECT nn.cid, c.cid AS c2 FROM nn FULL OUTER JOIN c ON nn.cid = c.cid")
    assert pq.schema[0].type.nullable and pq.schema[1].type.nullable


def test_cross_join_has_no_keys() -> None:
    graph, _ = _plan("SELECT o.oid, c.name FROM o CROSS JOIN c")
    (j,) = _joins(graph)
    assert j.params.left_keys == () and j.params.condition is None
    ex = [n for n in graph.nodes if n.operator == "Exchange" and n.id in j.inputs]
    assert all(n.params.distribution == "single" for n in ex)


def test_equality_of_an_expression_is_a_computed_key() -> None:
    """`MOD(o.amount, 10) = c.cid` (Nexmark q13_regular's shape) is a hash-join key on a
    column a Calc below the join computes, not a residual over every pair of rows."""
    graph, pq = _plan("SELECT o.oid, c.name FROM o JOIN c ON MOD(o.amount, 10) = c.cid")
    (j,) = _joins(graph)
    # o's columns read: oid, amount; then the key
    assert (j.params.left_keys, j.params.right_keys) == ((2,), (0,))
    assert j.params.condition is None and j.params.left_width == 3
    below = graph.node(graph.node(j.inputs[0]).inputs[0])  # Join <- Exchange <- Calc
    assert below.operator == "Calc" and "mod" in str(below.params.projections[2])
    assert [f.name for f in pq.schema] == ["oid", "name"]


def test_computed_keys_on_both_sides_keep_the_residual_and_outer_nullability() -> None:
    graph, pq = _plan("SELECT o.oid, c.name FROM o LEFT JOIN c ON o.cid + 1 = c.cid * 2 AND o.amount > 4")
    (j,) = _joins(graph)
    # after the columns read (o: oid, cid, amount; c: cid, name)
    assert (j.params.left_keys, j.params.right_keys) == ((3,), (2,))
    # the residual reads `amount` (left column 2) of the widened row
    assert j.params.condition is not None and "InputRef(index=2" in repr(j.params.condition)
    assert pq.schema[1].type.nullable


def test_nondeterministic_equality_stays_residual() -> None:
    graph, _ = _plan("SELECT o.oid FROM o JOIN c ON o.cid = c.cid + RAND_INTEGER(2)")
    (j,) = _joins(graph)
    assert j.params.left_keys == () and "rand_integer" in str(j.params.condition)


def test_not_in_keeps_null_semantics_and_uses_keys_when_not_null() -> None:
    graph, pq = _plan("SELECT oid FROM o WHERE cid NOT IN (SELECT cid FROM c)")
    (j,) = _joins(graph)
    assert j.params.join_type == "ANTI" and j.params.left_keys == ()
    assert "is_not_false" in str(j.params.condition)
    assert pq.changelog_mode == "I,UB,UA,D"
    graph, _ = _plan("SELECT cid FROM nn WHERE cid NOT IN (SELECT cid FROM nn)")
    (j,) = _joins(graph)
    assert j.params.left_keys == (0,) and j.params.condition is None


def test_semi_join_of_inserts_is_insert_only() -> None:
    graph, pq = _plan("SELECT oid FROM o WHERE EXISTS (SELECT 1 FROM c WHERE c.cid = o.cid AND c.name = 'x')")
    (j,) = _joins(graph)
    assert j.params.join_type == "SEMI" and j.params.left_keys == (1,)
    assert pq.changelog_mode == "I"


def test_correlated_count_subquery_is_decorrelated() -> None:
    graph, pq = _plan("SELECT oid, (SELECT COUNT(*) FROM c WHERE c.cid = o.cid) AS n FROM o")
    (j,) = _joins(graph)
    assert j.params.join_type == "LEFT" and j.params.left_keys == (1,)
    assert any(n.operator == "GroupAggregate" and n.params.grouping == (0,) for n in graph.nodes)
    # a customer-less order counts 0, not NULL
    assert graph.result_node is not None
    assert "coalesce" in str(graph.node(graph.result_node).params.projections[1])


def test_star_does_not_show_hidden_scalar_columns() -> None:
    _, pq = _plan("SELECT * FROM o WHERE amount > (SELECT AVG(amount) FROM o)")
    assert [f.name for f in pq.schema] == ["oid", "cid", "amount"]


def test_uncorrelated_non_aggregate_scalar_subquery_checks_one_row() -> None:
    graph, _ = _plan("SELECT oid, (SELECT name FROM c WHERE cid = 1) AS n FROM o")
    (j,) = _joins(graph)
    assert j.params.single_row_right is True
    graph, _ = _plan("SELECT oid, (SELECT MAX(name) FROM c) AS n FROM o")
    (j,) = _joins(graph)
    assert j.params.single_row_right is False


def test_unsupported_correlation_is_reported() -> None:
    with pytest.raises(UnsupportedSqlError):
        _plan("SELECT oid, (SELECT name FROM c WHERE c.cid = o.cid) AS n FROM o")


# ---------------------------------------------------------------------- end to end
ORDERS = [(1, 10, 5), (2, 20, 7), (3, 10, 1), (4, None, 9), (5, 30, 0), (6, 40, 3)]
CUSTOMERS = [(10, "Ann", "DE"), (20, "Bob", "FR"), (20, "Bobby", "FR"), (30, "Cem", None), (None, "Nul", "DE")]


def _run(tmp_path: Path, sql: str, mode: str, batch_rows: int = 1) -> Counter:
    def write(name: str, rows: list[tuple]) -> None:
        text = "\n".join(",".join("NULL" if v is None else str(v) for v in r) for r in rows) + "\n"
        (tmp_path / name).write_text(text)

    write("o.csv", ORDERS)
    write("c.csv", CUSTOMERS)
    ddl = DDL.replace("'path' = '", f"'path' = '{tmp_path}/").replace(
        "'format' = 'csv'", "'format' = 'csv', 'csv.null-literal' = 'NULL'"
    )
    env = TableEnvironment.create(EnvironmentSettings(mode, {"table.exec.source.batch-rows": str(batch_rows)}))
    *setup, last = env.parse(ddl + sql)
    for st in setup:
        env.execute_statement(st).wait()
    table: Counter = Counter()
    for row in env.execute_statement(last).collect():
        values = tuple(row)
        if row.get_row_kind().short_string() in ("-U", "-D"):
            table[values] -= 1
            assert table[values] >= 0, f"retracted a row not emitted: {values}"
        else:
            table[values] += 1
    return +table


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            # self-join of a table with a multi-way join on top
            "SELECT a.oid, b.oid AS oid2, c.name FROM o a JOIN o b ON a.cid = b.cid AND a.oid < b.oid "
            "JOIN c ON c.cid = a.cid",
            {(1, 3, "Ann"): 1},
        ),
        (
            "SELECT o.oid, c.name FROM o RIGHT JOIN c ON o.cid = c.cid AND o.amount > 4",
            {(1, "Ann"): 1, (2, "Bob"): 1, (2, "Bobby"): 1, (None, "Cem"): 1, (None, "Nul"): 1},
        ),
        (
            "SELECT oid FROM o WHERE cid NOT IN (SELECT cid FROM c WHERE country = 'FR')",
            {(1,): 1, (3,): 1, (5,): 1, (6,): 1},
        ),
        ("SELECT oid FROM o WHERE cid NOT IN (SELECT cid FROM c)", {}),
        ("SELECT oid FROM o WHERE (cid, oid) IN (SELECT cid, 1 FROM c)", {(1,): 1}),
        (
            "SELECT oid, (SELECT COUNT(*) FROM c WHERE c.cid = o.cid AND c.country = 'FR') AS n FROM o WHERE oid < 4",
            {(1, 0): 1, (2, 2): 1, (3, 0): 1},
        ),
        # computed equi-join keys (an expression of one side = an expression of the other)
        (
            "SELECT o.oid, c.name FROM o JOIN c ON MOD(o.oid, 2) * 10 = c.cid",
            {(1, "Ann"): 1, (3, "Ann"): 1, (5, "Ann"): 1},
        ),
        (
            "SELECT o.oid, c.name FROM o LEFT JOIN c ON o.cid = c.cid + 10 AND o.amount > 4",
            {(1, None): 1, (2, "Ann"): 1, (3, None): 1, (4, None): 1, (5, None): 1, (6, None): 1},
        ),
        (
            "SELECT o.oid, c.name FROM o FULL JOIN c ON o.cid * 2 = c.cid + c.cid",
            {(1, "Ann"): 1, (3, "Ann"): 1, (2, "Bob"): 1, (2, "Bobby"): 1, (5, "Cem"): 1, (6, None): 1, (4, None): 1}
            | {(None, "Nul"): 1},
        ),
        ("SELECT oid FROM o WHERE EXISTS (SELECT 1 FROM c WHERE c.cid = o.cid + 10)", {(1,): 1, (2,): 1, (3,): 1}),
    ],
)
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_end_to_end(tmp_path: Path, sql: str, expected: dict, mode: str) -> None:
    assert _run(tmp_path, sql, mode) == Counter(expected)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_scalar_subquery_with_more_than_one_row_fails(tmp_path: Path, mode: str) -> None:
    with pytest.raises(JobError, match="more than one row"):
        _run(tmp_path, "SELECT oid, (SELECT name FROM c WHERE cid = 20) AS n FROM o", mode)


# ---------------------------------------------------------------------- USING / NATURAL
@pytest.mark.parametrize(
    "sql",
    ["SELECT * FROM o JOIN c USING (cid)", "SELECT * FROM o NATURAL JOIN c", "SELECT * FROM o JOIN c ON o.cid = c.cid"],
)
def test_using_and_natural_join_on_the_common_columns(sql: str) -> None:
    graph, pq = _plan(sql)
    (join,) = _joins(graph)
    assert join.params.left_keys == (1,) and join.params.right_keys == (0,)
    names = [f.name for f in pq.schema]
    if "ON" in sql:
        assert names == ["oid", "cid", "amount", "cid0", "name", "country"]
    else:  # the common column once, first (Calcite)
        assert names == ["cid", "oid", "amount", "name", "country"]


def test_using_column_is_unqualified_and_the_sides_stay_qualified() -> None:
    _, pq = _plan("SELECT cid, o.cid AS ocid, c.cid AS ccid, c.* FROM o FULL JOIN c USING (cid)")
    assert [f.name for f in pq.schema] == ["cid", "ocid", "ccid", "cid0", "name", "country"]
    with pytest.raises(SqlError, match="Column 'nope' not found in any table"):
        _plan("SELECT * FROM o JOIN c USING (nope)")
    with pytest.raises(SqlError, match="Column 'amount' is ambiguous"):
        _plan("SELECT amount FROM o JOIN o AS o2 USING (oid)")


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_using_join_rows(mode: str, tmp_path: Path) -> None:
    (tmp_path / "o.csv").write_text("1,10,5\n2,20,6\n3,30,7\n")
    (tmp_path / "c.csv").write_text("10,ann,DE\n30,bo,FR\n40,cy,US\n")
    env = TableEnvironment.create(
        EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    )
    for name, cols in (("o", "oid INT, cid INT, amount INT"), ("c", "cid INT, name STRING, country STRING")):
        env.execute_sql(
            f"CREATE TABLE {name} ({cols}) WITH ('connector'='filesystem', 'path'='{tmp_path / name}.csv', 'format'='csv')"
        )
    inner = sorted(tuple(r) for r in env.execute_sql("SELECT * FROM o NATURAL JOIN c").collect())
    assert inner == [(10, 1, 5, "ann", "DE"), (30, 3, 7, "bo", "FR")]
    if mode == "batch":
        full = sorted(
            tuple(r) for r in env.execute_sql("SELECT cid, oid, name FROM o FULL JOIN c USING (cid)").collect()
        )
        assert full == [(10, 1, "ann"), (20, 2, None), (30, 3, "bo"), (40, None, "cy")]
