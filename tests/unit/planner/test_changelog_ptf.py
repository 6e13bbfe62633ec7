"""Planning TO_CHANGELOG / FROM_CHANGELOG: both call forms, the JobGraph params, the
changelog modes, and TO_CHANGELOG over a CDC (debezium-json) source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import UnsupportedSqlError
from planner.parse import parse_script
from planner.statements import CreateTable, Query
from runtime.graph import JobGraph
from runtime.operators.process_table_function import (
    FROM_CHANGELOG,
    PROCESS_TABLE_FUNCTION,
    TO_CHANGELOG,
    ProcessTableFunctionParams,
)
from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.row import RowKind

DDL = (
    "CREATE TABLE cdc (id INT, op STRING, name STRING) "
    "WITH ('connector' = 'filesystem', 'path' = 'cdc.json', 'format' = 'json');"
)


def _plan(sql: str) -> tuple[JobGraph, str]:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming"})
    query = None
    for st in parse_script(DDL + sql):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Query):
            query = st
    assert query is not None
    planned = planner.plan_query(query)
    return planned.graph, planned.changelog_mode


def _ptf(graph: JobGraph) -> ProcessTableFunctionParams:
    (node,) = [n for n in graph.nodes if n.operator == PROCESS_TABLE_FUNCTION.name]
    assert isinstance(node.params, ProcessTableFunctionParams)
    return node.params


def test_bare_and_wrapped_calls_plan_alike_and_survive_the_json_graph() -> None:
    bare, mode = _plan("SELECT * FROM FROM_CHANGELOG(input => TABLE cdc, op_mapping => MAP['c, r', 'INSERT']);")
    wrapped, _ = _plan("SELECT * FROM TABLE(FROM_CHANGELOG(TABLE cdc, DEFAULT, MAP['c, r', 'INSERT']));")
    assert mode == "I,UB,UA,D"
    p = _ptf(bare)
    assert p.function == FROM_CHANGELOG
    assert p.op_column == 1
    assert p.mapping == (("INSERT", "c"), ("INSERT", "r"))
    assert _ptf(JobGraph.from_json(bare.to_json())) == p
    assert _ptf(wrapped).mapping == p.mapping


def test_to_changelog_is_insert_only_with_a_nullable_string_op_column() -> None:
    graph, mode = _plan("SELECT * FROM TO_CHANGELOG(input => TABLE (SELECT name, COUNT(*) c FROM cdc GROUP BY name));")
    assert mode == "I"
    p = _ptf(graph)
    assert p.function == TO_CHANGELOG and p.op_column == 0
    node = next(n for n in graph.nodes if n.operator == PROCESS_TABLE_FUNCTION.name)
    assert [f.name for f in node.schema] == ["op", "name", "c"]
    assert str(node.schema[0].type) == "STRING"


def test_positional_after_named_argument_is_refused() -> None:
    with pytest.raises(Exception, match="positional argument cannot follow a named argument"):
        _plan("SELECT * FROM TO_CHANGELOG(input => TABLE cdc, DESCRIPTOR(x));")


def test_to_changelog_of_a_cdc_source(tmp_path: Path) -> None:
    events = [
        {"before": None, "after": {"k": "a", "v": 1}, "op": "c"},
        {"before": {"k": "a", "v": 1}, "after": {"k": "a", "v": 2}, "op": "u"},
        {"before": {"k": "a", "v": 2}, "after": None, "op": "d"},
    ]
    (tmp_path / "cdc.json").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(
        "CREATE TABLE src (k STRING, v INT) WITH ("
        f"'connector' = 'filesystem', 'path' = '{tmp_path / 'cdc.json'}', 'format' = 'debezium-json')"
    )
    rows = list(env.execute_sql("SELECT * FROM TO_CHANGELOG(input => TABLE src)").collect())
    assert {r.get_row_kind() for r in rows} == {RowKind.INSERT}
    assert [tuple(r) for r in rows] == [
        ("INSERT", "a", 1),
        ("UPDATE_BEFORE", "a", 1),
        ("UPDATE_AFTER", "a", 2),
        ("DELETE", "a", 2),
    ]
    with pytest.raises(UnsupportedSqlError, match="append-only"):
        env.execute_sql("SELECT * FROM FROM_CHANGELOG(input => TABLE src, op => DESCRIPTOR(k))")
