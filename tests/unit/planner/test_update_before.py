"""UPDATE_BEFORE inference (planner/changelog.py `require_update_before`, Flink's
SatisfyUpdateKindTraitVisitor): which updating edges carry -U rows, as EXPLAIN CHANGELOG_MODE
shows them, and that the runtime operators then emit none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.parse import parse_script
from planner.statements import CreateTable, Explain, InsertInto, Query
from runtime.executor.local import LocalExecutor
from runtime.graph import JobGraph
from runtime.operators.sink import SINK

DDL = """
CREATE TABLE src (id INT, grp STRING, v BIGINT) WITH ('connector' = 'filesystem', 'path' = 'x.json', 'format' = 'json');
CREATE TABLE other (grp STRING, w BIGINT) WITH ('connector' = 'filesystem', 'path' = 'y.json', 'format' = 'json');
CREATE TABLE by_grp (grp STRING, n BIGINT, PRIMARY KEY (grp) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE by_n (n BIGINT, c BIGINT, PRIMARY KEY (n) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE by_id (id INT, grp STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE top_rn (grp STRING, id INT, rn BIGINT, PRIMARY KEY (grp, rn) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE joined (grp STRING, n BIGINT, w BIGINT, PRIMARY KEY (grp) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'topic' = 't', 'properties.bootstrap.servers' = 'h:1', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE hole (grp STRING, n BIGINT) WITH ('connector' = 'blackhole');
CREATE TABLE cdc (id INT, grp STRING, PRIMARY KEY (id) NOT ENFORCED)
  WITH ('connector' = 'filesystem', 'path' = 'c.json', 'format' = 'debezium-json');
CREATE TABLE printed (grp STRING, n BIGINT) WITH ('connector' = 'print');
"""


def _planner() -> Planner:
    catalog = Catalog()
    planner = Planner(catalog, {"execution.runtime-mode": "streaming"})
    for st in parse_script(DDL):
        assert isinstance(st, CreateTable)
        catalog.create_table(st)
    return planner


def _modes(sql: str) -> list[str]:
    """`Operator [mode]` of each line of EXPLAIN CHANGELOG_MODE's physical plan, top down."""
    (st,) = parse_script(f"EXPLAIN CHANGELOG_MODE {sql};")
    assert isinstance(st, Explain)
    text = _planner().explain(st)
    plan = text.split("== Optimized Physical Plan ==\n")[1].split("\n\n")[0]
    out = []
    for line in plan.splitlines():
        name = line.lstrip(" :+-").split("(")[0]
        out.append(f"{name} [{line.rsplit('changelogMode=[', 1)[1].split(']')[0]}]")
    return out


def test_an_upsert_sink_keyed_like_the_updates_gets_no_update_before() -> None:
    assert _modes("INSERT INTO by_grp SELECT grp, COUNT(*) FROM src GROUP BY grp")[:3] == [
        "Sink [NONE]",
        "Calc [I,UA]",
        "GroupAggregate [I,UA]",
    ]


def test_an_upsert_sink_keyed_elsewhere_needs_update_before() -> None:
    # the PRIMARY KEY (id) is not the updates' upsert key (grp): -U keep the old id's row right
    modes = _modes("INSERT INTO by_id SELECT MAX(id), grp FROM src GROUP BY grp")
    assert "GroupAggregate [I,UB,UA]" in modes


def test_a_retract_sink_needs_update_before() -> None:
    assert "GroupAggregate [I,UB,UA]" in _modes("INSERT INTO printed SELECT grp, COUNT(*) FROM src GROUP BY grp")


def test_blackhole_takes_upserts() -> None:
    assert "GroupAggregate [I,UA]" in _modes("INSERT INTO hole SELECT grp, COUNT(*) FROM src GROUP BY grp")


def test_an_aggregate_over_an_aggregate_retracts_the_inner_one() -> None:
    modes = _modes(
        "INSERT INTO by_n SELECT n, COUNT(*) FROM (SELECT grp, COUNT(*) AS n FROM src GROUP BY grp) GROUP BY n"
    )
    aggs = [m for m in modes if m.startswith("GroupAggregate")]
    assert aggs == ["GroupAggregate [I,UA,D]", "GroupAggregate [I,UB,UA]"]


def test_top_n_with_its_rank_number_into_an_upsert_sink_keyed_by_partition_and_rank() -> None:
    sql = (
        "INSERT INTO top_rn SELECT grp, id, rn FROM (SELECT grp, id, ROW_NUMBER() OVER "
        "(PARTITION BY grp ORDER BY v DESC) AS rn FROM src) WHERE rn <= 3"
    )
    assert "Rank [I,UA,D]" in _modes(sql)


def test_top_n_without_its_rank_number_keeps_update_before() -> None:
    # no upsert key matches the sink's PRIMARY KEY (grp): Flink falls back to -U
    sql = (
        "INSERT INTO by_grp SELECT grp, id FROM (SELECT grp, CAST(id AS BIGINT) AS id, ROW_NUMBER() OVER "
        "(PARTITION BY grp ORDER BY v DESC) AS rn FROM src) WHERE rn <= 3"
    )
    assert "Rank [I,UB,UA,D]" in _modes(sql)


def test_a_join_of_aggregates_on_their_keys_into_an_upsert_sink() -> None:
    sql = (
        "INSERT INTO joined SELECT a.grp, a.n, b.w FROM (SELECT grp, COUNT(*) AS n FROM src GROUP BY grp) a "
        "JOIN (SELECT grp, SUM(w) AS w FROM other GROUP BY grp) b ON a.grp = b.grp"
    )
    modes = _modes(sql)
    # the join leaves -U out; its inputs keep them (streamsql's join state retracts by them,
    # where Flink's would keep one row per key and take +U alone)
    assert "Join [I,UA,D]" in modes
    assert [m for m in modes if m.startswith("GroupAggregate")] == ["GroupAggregate [I,UB,UA]"] * 2


def test_a_filter_on_a_non_key_column_keeps_update_before() -> None:
    # FLINK-9528: a +U failing `n < 10` must retract the key's earlier row
    sql = "INSERT INTO by_grp SELECT grp, n FROM (SELECT grp, COUNT(*) AS n FROM src GROUP BY grp) WHERE n < 10"
    assert "GroupAggregate [I,UB,UA]" in _modes(sql)
    sql = "INSERT INTO by_grp SELECT grp, n FROM (SELECT grp, COUNT(*) AS n FROM src GROUP BY grp) WHERE grp <> 'x'"
    assert "GroupAggregate [I,UA]" in _modes(sql)


def test_an_explained_query_prefers_no_update_before_and_a_collected_one_keeps_them() -> None:
    sql = "SELECT grp, COUNT(*) AS n FROM src GROUP BY grp"
    assert _modes(sql)[0] == "GroupAggregate [I,UA]"  # as Flink's EXPLAIN of a query
    (st,) = parse_script(sql + ";")
    assert isinstance(st, Query)
    planned = _planner().plan_query(st)  # collected: Flink's collect sink takes every kind
    assert planned.changelog_mode == "I,UB,UA"


def _sink_input_changelog(sql: str, tmp_path: Path, data: str = "x.json") -> list[str]:
    """Plan the INSERT and run it with the sink's input as the job's result: the changelog
    the sink would get, as the runtime operators emit it."""
    (tmp_path / "x.json").write_text(
        "\n".join(f'{{"id": {i}, "grp": "{g}", "v": {v}}}' for i, (g, v) in enumerate([("a", 1), ("b", 2), ("a", 3)]))
        + "\n"
    )
    catalog = Catalog()
    # a batch per row: each row's change is emitted on its own
    planner = Planner(catalog, {"execution.runtime-mode": "streaming", "table.exec.source.batch-rows": "1"})
    for st in parse_script(DDL.replace(f"'{data}'", f"'{tmp_path / data}'") + sql + ";"):
        if isinstance(st, CreateTable):
            catalog.create_table(st)
        else:
            assert isinstance(st, InsertInto)
            graph = planner.plan_inserts([st])
    (sink,) = [n for n in graph.nodes if n.is_kind(SINK)]
    nodes = tuple(n for n in graph.nodes if n.id != sink.id)
    rows: list[str] = []
    for batch in LocalExecutor(JobGraph(nodes, graph.mode, graph.config, sink.inputs[0])).run():
        rows += [("+I", "-U", "+U", "-D")[r["__op"]] for r in batch.to_pylist()]
    return rows


@pytest.mark.parametrize(("sink", "kinds"), [("by_grp", ["+I", "+I", "+U"]), ("printed", ["+I", "+I", "-U", "+U"])])
def test_the_aggregate_emits_update_before_only_for_a_sink_that_wants_them(
    tmp_path: Path, sink: str, kinds: list[str]
) -> None:
    sql = f"INSERT INTO {sink} SELECT grp, COUNT(*) FROM src GROUP BY grp"
    assert _sink_input_changelog(sql, tmp_path) == kinds


def test_top_n_emits_no_update_before_into_an_upsert_sink(tmp_path: Path) -> None:
    sql = (
        "INSERT INTO top_rn SELECT grp, id, rn FROM (SELECT grp, id, ROW_NUMBER() OVER "
        "(PARTITION BY grp ORDER BY v DESC) AS rn FROM src) WHERE rn <= 3"
    )
    # a: id 0 ranked 1, then id 2 takes rank 1 (+U) and id 0 moves to rank 2 (+I)
    assert _sink_input_changelog(sql, tmp_path) == ["+I", "+I", "+U", "+I"]


def test_a_cdc_source_into_an_upsert_sink_keyed_like_it_drops_its_update_before() -> None:
    # Flink: a DropUpdateBefore right above the source
    assert _modes("INSERT INTO by_id SELECT id, grp FROM cdc") == [
        "Sink [NONE]",
        "Exchange [I,UA,D]",  # table.exec.sink.keyed-shuffle
        "DropUpdateBefore [I,UA,D]",
        "TableSourceScan [I,UB,UA,D]",
    ]
    # into a retract sink the -U stay
    assert _modes("INSERT INTO printed SELECT grp, CAST(id AS BIGINT) FROM cdc") == [
        "Sink [NONE]",
        "Calc [I,UB,UA,D]",
        "TableSourceScan [I,UB,UA,D]",
    ]


def test_drop_update_before_at_run_time(tmp_path: Path) -> None:
    events = [
        {"before": None, "after": {"id": 1, "grp": "a"}, "op": "c"},
        {"before": {"id": 1, "grp": "a"}, "after": {"id": 1, "grp": "b"}, "op": "u"},
        {"before": {"id": 1, "grp": "b"}, "after": None, "op": "d"},
    ]
    (tmp_path / "c.json").write_text("".join(json.dumps(e) + "\n" for e in events))
    sql = "INSERT INTO by_id SELECT id, grp FROM cdc"
    assert _sink_input_changelog(sql, tmp_path, "c.json") == ["+I", "+U", "-D"]
