"""The STATE_TTL query hint (planner/binder/hints.py): which join side / aggregate of the
query block a key names, the node param `state_ttl_ms` it becomes, and Flink's errors."""

from __future__ import annotations

from typing import Any

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlValidationError
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Query
from runtime.graph import JobGraph

DDL = """
CREATE TABLE orders (oid INT, cid INT, amount INT) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE customers (cid INT, name STRING) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');
CREATE TABLE items (oid INT, sku STRING) WITH ('connector' = 'filesystem', 'path' = 'i.csv', 'format' = 'csv');
CREATE VIEW big AS SELECT * FROM orders WHERE amount > 10;
"""
H, D = 3_600_000, 86_400_000


def _plan(sql: str, **config: str) -> JobGraph:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming", **config})
    for st in parse_script(DDL + sql):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, CreateView):
            catalog.create_view(st)
        elif isinstance(st, Query):
            return planner.plan_query(st).graph
    raise AssertionError("no query")


def _ttl(graph: JobGraph, operator: str) -> list[Any]:
    return [_hint(n.params) for n in graph.nodes if n.operator == operator]


def _hint(params: Any) -> Any:
    """The STATE_TTL hint of a node's params (typed, or a plain dict), tuples as lists."""
    v = params.get("state_ttl_ms") if isinstance(params, dict) else getattr(params, "state_ttl_ms", None)
    return list(v) if isinstance(v, tuple) else v


def test_join_sides_by_alias() -> None:
    g = _plan(
        "SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ o.oid, c.name FROM orders o JOIN customers c ON o.cid = c.cid"
    )
    assert _ttl(g, "Join") == [[D, 12 * H]]


def test_join_one_side_by_table_name_and_identifier_keys() -> None:
    g = _plan(
        "SELECT /*+ STATE_TTL(customers = '30 min') */ * FROM orders LEFT JOIN customers ON orders.cid = customers.cid"
    )
    assert _ttl(g, "Join") == [[None, 30 * 60_000]]


def test_multi_way_join_hints_each_join() -> None:
    g = _plan(
        "SELECT /*+ STATE_TTL('o' = '1h', 'c' = '2h', 'i' = '3h') */ o.oid FROM orders o "
        "JOIN customers c ON o.cid = c.cid JOIN items i ON o.oid = i.oid"
    )
    assert sorted(_ttl(g, "Join"), key=str) == sorted([[H, 2 * H], [None, 3 * H]], key=str)


def test_group_aggregate_by_input_name_view_and_subquery_alias() -> None:
    assert _ttl(
        _plan("SELECT /*+ STATE_TTL('orders' = '1h') */ cid, COUNT(*) FROM orders GROUP BY cid"), "GroupAggregate"
    ) == [H]
    g = _plan("SELECT /*+ STATE_TTL('big' = '2h') */ cid, SUM(amount) FROM big GROUP BY cid HAVING SUM(amount) > 1")
    assert _ttl(g, "GroupAggregate") == [2 * H]
    g = _plan(
        "SELECT /*+ STATE_TTL('tmp' = '1d') */ cid, COUNT(*) FROM ("
        "SELECT /*+ STATE_TTL('o' = '12h', 'c' = '3d') */ o.cid FROM orders o JOIN customers c ON o.cid = c.cid) tmp "
        "GROUP BY cid"
    )
    assert _ttl(g, "GroupAggregate") == [D]
    assert _ttl(g, "Join") == [[12 * H, 3 * D]]


def test_select_distinct_is_an_aggregate() -> None:
    assert _ttl(_plan("SELECT /*+ STATE_TTL('orders' = '5 s') */ DISTINCT cid FROM orders"), "GroupAggregate") == [5000]


def test_two_phase_aggregation_keeps_the_hint_on_the_global_phase() -> None:
    g = _plan(
        "SELECT /*+ STATE_TTL('orders' = '1h') */ cid, COUNT(*) FROM orders GROUP BY cid",
        **{"table.exec.mini-batch.enabled": "true", "table.exec.mini-batch.allow-latency": "1 s",
           "table.exec.mini-batch.size": "100"},
    )  # fmt: skip
    assert _ttl(g, "GlobalGroupAggregate") == [H]


def test_no_hint_no_param_and_config_is_read_by_the_runtime() -> None:
    g = _plan("SELECT cid, COUNT(*) FROM orders GROUP BY cid", **{"table.exec.state.ttl": "1 h"})
    assert _ttl(g, "GroupAggregate") == [None]
    assert g.config["table.exec.state.ttl"] == "1 h"


def test_hint_not_naming_an_input_is_an_error() -> None:
    with pytest.raises(SqlValidationError, match="cannot match the name of input tables or views") as e:
        _plan("SELECT /*+ STATE_TTL('foo' = '1d', 'o' = '1d') */ * FROM orders o JOIN customers c ON o.cid = c.cid")
    assert "`foo` in `state_ttl`" in str(e.value)
    with pytest.raises(SqlValidationError, match="cannot match"):
        _plan("SELECT /*+ STATE_TTL('customers' = '1h') */ cid, COUNT(*) FROM orders GROUP BY cid")


def test_alias_hides_the_table_name() -> None:
    with pytest.raises(SqlValidationError, match="`orders` in `state_ttl`"):
        _plan("SELECT /*+ STATE_TTL('orders' = '1h') */ o.cid, COUNT(*) FROM orders o GROUP BY o.cid")


def test_invalid_values() -> None:
    with pytest.raises(SqlValidationError, match="Invalid STATE_TTL hint value"):
        _plan("SELECT /*+ STATE_TTL('orders' = 'forever') */ cid, COUNT(*) FROM orders GROUP BY cid")
    with pytest.raises(SqlValidationError, match="Invalid STATE_TTL hint"):
        _plan("SELECT /*+ STATE_TTL('orders') */ cid, COUNT(*) FROM orders GROUP BY cid")


def test_block_without_join_or_aggregate_ignores_the_hint() -> None:
    g = _plan("SELECT /*+ STATE_TTL('nothing' = '1h') */ oid FROM orders")
    assert all(_hint(n.params) is None for n in g.nodes)


# ---------------------------------------------------------------------- join hints (hints.md)
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT /*+ BROADCAST(orders) */ * FROM orders JOIN customers ON orders.cid = customers.cid",
        "SELECT /*+ SHUFFLE_HASH(orders, items) */ * FROM orders JOIN customers ON orders.cid = customers.cid "
        "JOIN items ON orders.oid = items.oid",
        "SELECT /*+ BROADCAST(customers), NEST_LOOP(o) */ o.oid FROM orders o JOIN customers ON o.cid = customers.cid",
        "SELECT /*+ BROADCAST(nowhere) */ oid FROM orders",  # no join in the block: ignored
    ],
)
def test_join_hints_naming_inputs_are_accepted(sql: str) -> None:
    assert _plan(sql).nodes


def test_join_hint_naming_no_input_is_refused() -> None:
    with pytest.raises(SqlValidationError, match="cannot match the name of input tables or views") as e:
        _plan(
            "SELECT /*+ BROADCAST(orders), SHUFFLE_MERGE(t8, t9) */ o.oid FROM orders o "
            "JOIN customers c ON o.cid = c.cid"
        )
    assert "`orders` in `broadcast`\n`t8, t9` in `shuffle_merge`" in str(e.value)
    with pytest.raises(SqlValidationError, match="`Customers` in `lookup`"):
        _plan("SELECT /*+ LOOKUP('table'='Customers') */ o.oid FROM orders o JOIN customers c ON o.cid = c.cid")


@pytest.mark.parametrize(
    ("hint", "shown"),
    [
        # the cases of Flink's StateTtlHintTest, and its physical Join lines
        ("STATE_TTL('items' = '2d', 'orders' = '1d')", ["stateTtlHints=[[[STATE_TTL options:{LEFT=1d, RIGHT=2d}]]]"]),
        ("STATE_TTL('items' = '2d')", ["stateTtlHints=[[[STATE_TTL options:{RIGHT=2d}]]]"]),
        ("STATE_TTL('items' = '2d', 'items' = '12 h')", ["stateTtlHints=[[[STATE_TTL options:{RIGHT=12 h}]]]"]),
    ],
)
def test_explain_shows_the_hint_on_the_join(hint: str, shown: list[str]) -> None:
    """EXPLAIN's Join line ends with `stateTtlHints=[[[STATE_TTL options:{LEFT=.., RIGHT=..}]]]`,
    the values as written, as Flink's physical Join prints them."""
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming"})
    sql = f"EXPLAIN SELECT /*+ {hint} */ * FROM orders JOIN items ON orders.oid = items.oid"
    for st in parse_script(DDL + sql + ";"):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, CreateView):
            catalog.create_view(st)
        else:
            plan = planner.explain(st)
    joins = [line for line in plan.split("== Optimized Execution Plan ==")[1].splitlines() if "Join(" in line]
    assert [line[line.index("stateTtlHints") :].rstrip(")") for line in joins] == shown
    no_hint = planner.explain(parse_script("EXPLAIN SELECT * FROM orders JOIN items ON orders.oid = items.oid;")[0])
    assert "stateTtlHints" not in no_hint
