"""`table.exec.sink.keyed-shuffle`: a hash Exchange on a sink's PRIMARY KEY in front of the
sink when its update stream is not distributed on the key columns already."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.parse import parse_script
from planner.statements import CreateTable, Explain

DDL = """
CREATE TABLE src (id INT, grp STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = 'x.json', 'format' = 'json');
CREATE TABLE by_grp (grp STRING, n BIGINT, PRIMARY KEY (grp) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE by_id (id INT, grp STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
"""


def _sink_input(sql: str, **config: str) -> str:
    """The line under the Sink in the optimized execution plan."""
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming", **config})
    out = ""
    for st in parse_script(DDL + f"EXPLAIN {sql};"):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Explain):
            out = planner.explain(st)
    lines = out.split("== Optimized Execution Plan ==")[1].strip().splitlines()
    assert lines[0].startswith("Sink(")
    return lines[1].strip()


def test_group_by_on_the_key_needs_no_shuffle() -> None:
    line = _sink_input("INSERT INTO by_grp SELECT grp, COUNT(*) FROM src GROUP BY grp")
    assert line.startswith("+- Calc(select=[ENFORCE_NOT_NULL(grp, 'grp') AS grp")


def test_an_update_stream_keyed_elsewhere_is_shuffled_on_the_primary_key() -> None:
    sql = "INSERT INTO by_id SELECT MAX(id), grp FROM src GROUP BY grp"
    assert _sink_input(sql) == "+- Exchange(distribution=[hash[id]])"
    assert _sink_input(sql, **{"table.exec.sink.keyed-shuffle": "NONE"}).startswith("+- Calc(")


@pytest.mark.parametrize(("setting", "shuffled"), [("AUTO", False), ("FORCE", True)])
def test_an_insert_only_input_is_shuffled_only_with_force(setting: str, shuffled: bool) -> None:
    line = _sink_input("INSERT INTO by_id SELECT id, grp FROM src", **{"table.exec.sink.keyed-shuffle": setting})
    assert (line == "+- Exchange(distribution=[hash[id]])") is shuffled
