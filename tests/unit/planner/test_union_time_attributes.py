"""Time attributes through set operations, typed as Flink 2.3 types them: Calcite's least
restrictive type of each column (FlinkTypeFactory: identical time attributes stay one;
otherwise Calcite keeps the first input's type when the others have its type and
precision), every UNION ALL input cast to it (CoerceInputsRule); the distinct forms and
INTERSECT / EXCEPT are aggregations, whose keys are no time attributes."""

from __future__ import annotations

import pytest

from planner.binder import bind_query
from planner.binder.types import set_operation_type
from planner.catalog import Catalog
from planner.errors import SqlValidationError
from planner.logical import LogicalProject, LogicalUnion, walk
from planner.parse import parse_script
from planner.statements import CreateTable, Query
from runtime.types import TIMESTAMP, TIMESTAMP_LTZ

DDL = """
CREATE TABLE a (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector'='datagen');
CREATE TABLE b (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector'='datagen');
CREATE TABLE c (id INT, ts TIMESTAMP(3) NOT NULL, WATERMARK FOR ts AS ts) WITH ('connector'='datagen');
CREATE TABLE p (id INT, ts TIMESTAMP(3)) WITH ('connector'='datagen');
CREATE TABLE q (id INT, ts TIMESTAMP(3), pt AS PROCTIME()) WITH ('connector'='datagen');
"""
TUMBLE = "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE ({}), DESCRIPTOR(ts), INTERVAL '1' DAY)) GROUP BY window_start, window_end"


def bind(sql: str, mode: str = "STREAMING"):
    cat = Catalog()
    for st in parse_script(DDL):
        if isinstance(st, CreateTable):
            cat.create_table(st)
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    return bind_query(st.query, cat, st.sql, mode)


def _union(sql: str) -> LogicalUnion:
    return next(n for n in walk(bind(sql)) if isinstance(n, LogicalUnion))


def test_rowtime_in_every_input_stays_a_rowtime() -> None:
    u = _union("SELECT * FROM a UNION ALL SELECT * FROM b UNION ALL SELECT * FROM a")
    assert len(u.children) == 3
    assert str(u.fields[1].type) == "TIMESTAMP(3) *ROWTIME*"
    assert u.fields[0].type.time_attr is None


def test_nullable_and_not_null_rowtimes_give_a_nullable_rowtime() -> None:
    u = _union("SELECT * FROM c UNION ALL SELECT * FROM a")
    assert str(u.fields[1].type) == "TIMESTAMP(3) *ROWTIME*" and u.fields[1].type.nullable


def test_rowtime_first_then_plain_timestamp_is_a_rowtime_cast_into_the_plain_input() -> None:
    # Calcite keeps the first type; CoerceInputsRule casts the other input to it.
    u = _union("SELECT * FROM a UNION ALL SELECT * FROM p")
    assert u.fields[1].type.time_attr == "ROWTIME"
    cast = u.children[1]
    assert isinstance(cast, LogicalProject) and cast.exprs[1].name == "cast"  # type: ignore[attr-defined]
    assert cast.fields[1].type.time_attr == "ROWTIME"


def test_plain_timestamp_first_loses_the_rowtime() -> None:
    u = _union("SELECT * FROM p UNION ALL SELECT * FROM a")
    assert u.fields[1].type.time_attr is None
    with pytest.raises(SqlValidationError) as e:
        bind(TUMBLE.format("SELECT * FROM p UNION ALL SELECT * FROM a"))
    assert "The window function requires the timecol is a time attribute type, but is TIMESTAMP(3)." in str(e.value)
    assert e.value.line == 1 and e.value.column is not None


def test_window_over_union_in_batch_mode_binds() -> None:
    bind(TUMBLE.format("SELECT * FROM a UNION ALL SELECT * FROM b"), "BATCH")


@pytest.mark.parametrize("op", ["UNION", "INTERSECT", "EXCEPT", "INTERSECT ALL", "EXCEPT ALL"])
def test_distinct_and_counting_set_operations_have_no_time_attribute(op: str) -> None:
    with pytest.raises(SqlValidationError, match="requires the timecol is a time attribute type"):
        bind(TUMBLE.format(f"SELECT * FROM a {op} SELECT * FROM b"))


def test_proctime_in_every_input_stays_a_proctime() -> None:
    u = _union("SELECT id, pt FROM q UNION ALL SELECT id, pt FROM q")
    assert str(u.fields[1].type) == "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*"


def test_set_operation_type_rules() -> None:
    row = TIMESTAMP(3).as_time_attr("ROWTIME")
    assert set_operation_type([row, row.not_null()]).time_attr == "ROWTIME"  # type: ignore[union-attr]
    assert set_operation_type([row, TIMESTAMP(3)]).time_attr == "ROWTIME"  # type: ignore[union-attr]
    assert set_operation_type([TIMESTAMP(3), row]).time_attr is None  # type: ignore[union-attr]
    assert str(set_operation_type([row, TIMESTAMP(6)])) == "TIMESTAMP(6)"  # another precision: plain
    ltz = TIMESTAMP_LTZ(3)
    proc = ltz.as_time_attr("PROCTIME")
    assert set_operation_type([proc, proc]).time_attr == "PROCTIME"  # type: ignore[union-attr]
    assert set_operation_type([row, proc]) is None  # TIMESTAMP and TIMESTAMP_LTZ: no common type


def _assigners(sql: str) -> list[bool]:
    from planner.api import Planner
    from runtime.operators.mini_batch import MiniBatchAssignerParams

    cat = Catalog()
    for st in parse_script(DDL):
        if isinstance(st, CreateTable):
            cat.create_table(st)
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    config = {
        "table.exec.mini-batch.enabled": "true",
        "table.exec.mini-batch.allow-latency": "1 s",
        "table.exec.mini-batch.size": "100",
        "table.optimizer.agg-phase-strategy": "TWO_PHASE",
    }
    graph = Planner(cat, config).plan_query(st).graph
    return [n.params.hold for n in graph.nodes if isinstance(n.params, MiniBatchAssignerParams)]


def test_mini_batch_assigners_below_a_rowtime_union_hold_no_rows() -> None:
    assert _assigners(TUMBLE.format("SELECT * FROM a UNION ALL SELECT * FROM b")) == [False, False]
    # a union whose rowtime is gone (projected away) lets them buffer as before
    assert _assigners("SELECT id, COUNT(*) FROM (SELECT id FROM a UNION ALL SELECT id FROM b) GROUP BY id") == [
        True,
        True,
    ]
