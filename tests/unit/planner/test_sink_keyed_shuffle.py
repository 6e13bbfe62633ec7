"""`table.exec.sink.keyed-shuffle`: a hash Exchange on a sink's PRIMARY KEY in front of the
sink when its update stream is not distributed on the key columns already."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError
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
    # the SinkMaterializer Flink plans here (the key `grp` of the updates is not the PRIMARY KEY `id`)
    # keys its state by the PRIMARY KEY: the shuffle stays, as Flink keys by it whatever keyed-shuffle says
    assert _sink_input(sql, **{"table.exec.sink.keyed-shuffle": "NONE"}) == "+- Exchange(distribution=[hash[id]])"
    no_materializer = {"table.exec.sink.keyed-shuffle": "NONE", "table.exec.sink.upsert-materialize": "NONE"}
    assert _sink_input(sql, **no_materializer).startswith("+- Calc(")


@pytest.mark.parametrize(("setting", "shuffled"), [("AUTO", False), ("FORCE", True)])
def test_an_insert_only_input_is_shuffled_only_with_force(setting: str, shuffled: bool) -> None:
    line = _sink_input("INSERT INTO by_id SELECT id, grp FROM src", **{"table.exec.sink.keyed-shuffle": setting})
    assert (line == "+- Exchange(distribution=[hash[id]])") is shuffled


# 'sink.parallelism' (Flink's CommonExecSink rules); the job's parallelism is 1 unless set.
PRINT_DDL = "CREATE TABLE p (grp STRING, n BIGINT) WITH ('connector' = 'print', 'sink.parallelism' = '{p}');"


def _plan(sql: str, ddl: str = "", **config: str) -> str:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming", **config})
    out = ""
    for st in parse_script(DDL + ddl + f"EXPLAIN {sql};"):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        elif isinstance(st, Explain):
            out = planner.explain(st)
    return out.split("== Optimized Execution Plan ==")[1].strip()


def test_sink_parallelism_other_than_the_input_rebalances_an_insert_only_input() -> None:
    plan = _plan("INSERT INTO p SELECT grp, v FROM src", PRINT_DDL.format(p=3))
    assert plan.splitlines()[1].strip() == "+- Exchange(distribution=[rebalance], parallelism=[3])"
    same = _plan("INSERT INTO p SELECT grp, v FROM src", PRINT_DDL.format(p=2), **{"parallelism.default": "2"})
    assert "Exchange" not in same  # the input's parallelism: forward, as Flink
    # table.exec.resource.default-parallelism overrides parallelism.default (Flink's order)
    table_level = {"parallelism.default": "1", "table.exec.resource.default-parallelism": "2"}
    assert "Exchange" not in _plan("INSERT INTO p SELECT grp, v FROM src", PRINT_DDL.format(p=2), **table_level)


def test_sink_parallelism_hashes_on_the_primary_key() -> None:
    ddl = (
        "CREATE TABLE k (id INT, grp STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'upsert-kafka', "
        "'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json', "
        "'sink.parallelism' = '{p}');"
    )
    insert = "INSERT INTO k SELECT id, grp FROM src"
    assert _plan(insert, ddl.format(p=2)).splitlines()[1].strip() == (
        "+- Exchange(distribution=[hash[id]], parallelism=[2])"
    )
    # a sink parallelism of 1 is not keyed (Flink: one writer keeps the order anyway)
    one = _plan(insert, ddl.format(p=1), **{"parallelism.default": "2"})
    assert one.splitlines()[1].strip() == "+- Exchange(distribution=[rebalance], parallelism=[1])"
    forced = _plan(insert, ddl.format(p=1), **{"parallelism.default": "2", "table.exec.sink.keyed-shuffle": "FORCE"})
    assert forced.splitlines()[1].strip() == "+- Exchange(distribution=[rebalance], parallelism=[1])"


def test_sink_parallelism_refusals_use_flinks_messages() -> None:
    with pytest.raises(
        SqlError, match=r"Invalid configured parallelism 0 for table 'default_catalog.default_database.p'\."
    ):
        _plan("INSERT INTO p SELECT grp, v FROM src", PRINT_DDL.format(p=0))
    with pytest.raises(
        SqlError,
        match=r"The sink for table 'default_catalog.default_database.p' has a configured parallelism of 2, while the "
        r"input parallelism is 1\. Since the configured parallelism is different from the input's parallelism and "
        r"the changelog mode is not insert-only, a primary key is required but could not be found\.",
    ):
        _plan("INSERT INTO p SELECT grp, COUNT(*) FROM src GROUP BY grp", PRINT_DDL.format(p=2))
