"""Restarting a Spark STREAMING job on its checkpoint (runtime/executor/spark/restart.py),
without Spark: the plan a checkpoint was written by is recorded beside it, and a restart
whose plan no longer matches fails naming what differs, never starting over silently.

- The same plan, or one changed only in stateless details (a filter: the operators' stable
  ids stay), restarts.
- A changed aggregate, a dropped query or a checkpoint of another layout is refused with
  the operators named and a hint; `ignore-unclaimed-state` leaves a dropped query behind.
- A record whose queries never started (no Spark files) is simply replaced.
(tests/spark/test_cluster_and_restart.py restarts a real job on its checkpoint.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from runtime.checkpoint.restore import RestoreError
from runtime.executor.spark import restart
from runtime.executor.spark.streaming import keeps_state
from streamsql import TableEnvironment

DDL = (
    "CREATE TABLE src (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 'in', 'format' = 'csv');"
    "CREATE TABLE snk (k STRING, n BIGINT) WITH ('connector' = 'blackhole');"
    "CREATE TABLE other (k STRING, n BIGINT) WITH ('connector' = 'blackhole')"
)


def _record(*inserts: str) -> dict[str, list[restart.Entry]]:
    env = TableEnvironment.create({"execution.runtime-mode": "streaming"})
    for stmt in DDL.split(";"):
        env.execute_sql(stmt)
    graph = env._planner().plan_inserts([env.parse(sql)[0] for sql in inserts])  # noqa: SLF001 - planning only
    return restart.plan_record(graph, keeps_state(graph))


COUNT = "INSERT INTO snk SELECT k, COUNT(*) FROM src WHERE v > 0 GROUP BY k"


def _started(root: Path, record: dict[str, Any]) -> None:
    """Record `record` and make its queries look started (Spark's offsets written)."""
    restart.check_and_record(str(root), record)
    for q in record:
        (root / q / "offsets").mkdir(parents=True)
        (root / q / "offsets" / "0").write_text("v1\n")


def test_the_same_plan_or_a_changed_filter_restarts(tmp_path: Path) -> None:
    _started(tmp_path, _record(COUNT))
    restart.check_and_record(str(tmp_path), _record(COUNT))
    restart.check_and_record(str(tmp_path), _record(COUNT.replace("v > 0", "v > 1")))  # stateless change


def test_a_changed_aggregate_is_refused_naming_the_operators(tmp_path: Path) -> None:
    _started(tmp_path, _record(COUNT))
    with pytest.raises(RestoreError) as err:
        restart.check_and_record(str(tmp_path), _record(COUNT.replace("COUNT(*)", "SUM(v)")))
    text = str(err.value)
    assert f"Cannot restart the Spark job on its checkpoint location '{tmp_path}'" in text
    assert "operators no longer in the job: GroupAggregate" in text
    assert "operators new to the job: GroupAggregate" in text
    assert "'execution.checkpointing.dir'" in text  # the hint
    # Refused before anything was written: the record is still the old plan's.
    restart.check_and_record(str(tmp_path), _record(COUNT))


def test_a_dropped_query_is_refused_unless_its_state_may_be_left(tmp_path: Path) -> None:
    both = _record(COUNT, COUNT.replace("snk", "other"))
    _started(tmp_path, both)
    with pytest.raises(RestoreError, match=r"query sink-\w+ \(.*GroupAggregate.*\) is no longer in the job"):
        restart.check_and_record(str(tmp_path), _record(COUNT))
    restart.check_and_record(str(tmp_path), _record(COUNT), ignore_unclaimed=True)


def test_a_checkpoint_of_another_layout_or_without_a_record_is_refused(tmp_path: Path) -> None:
    _started(tmp_path, _record(COUNT))
    path = tmp_path / restart.PLAN_FILE
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "layout": restart.STATE_LAYOUT - 1}))
    with pytest.raises(RestoreError, match="another version of the Spark runner"):
        restart.check_and_record(str(tmp_path), _record(COUNT))
    path.unlink()
    with pytest.raises(RestoreError, match="no _streamsql_plan.json"):
        restart.check_and_record(str(tmp_path), _record(COUNT))


def test_a_record_whose_queries_never_started_is_replaced(tmp_path: Path) -> None:
    restart.check_and_record(str(tmp_path), _record(COUNT))  # recorded; Spark never got to run
    restart.check_and_record(str(tmp_path), _record(COUNT.replace("COUNT(*)", "SUM(v)")))
    assert "GroupAggregate" in (tmp_path / restart.PLAN_FILE).read_text()
