"""Ranking: Top-N / dedup / window Top-N binding and operator choice, ORDER BY / LIMIT."""

from __future__ import annotations

import pytest

from planner.api import Planner
from planner.catalog import Catalog
from planner.errors import SqlError, UnsupportedSqlError
from planner.parse import parse_script
from planner.physical import PhysicalNode
from planner.statements import CreateTable, CreateView, Query

DDL = """
CREATE TABLE s (id INT, k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = 's.csv', 'format' = 'csv');
CREATE TABLE ev (
  ts TIMESTAMP(3),
  usr STRING,
  action STRING,
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'ev.csv', 'format' = 'csv');
"""


def _planner(mode: str = "streaming", extra: str = "") -> Planner:
    cat = Catalog()
    for st in parse_script(DDL + extra):
        if isinstance(st, CreateTable):
            cat.create_table(st)
        elif isinstance(st, CreateView):
            cat.create_view(st)
    return Planner(cat, {"execution.runtime-mode": mode})


def physical(sql: str, mode: str = "streaming", extra: str = "") -> PhysicalNode:
    (st,) = [s for s in parse_script(sql) if isinstance(s, Query)]
    p = _planner(mode, extra)
    return p.optimize(p.bind(st), st.sql)


def nodes(n: PhysicalNode) -> list[PhysicalNode]:
    out = [n]
    for i in n.inputs:
        out += nodes(i)
    return out


def find(n: PhysicalNode, op: str) -> PhysicalNode:
    for x in nodes(n):
        if x.operator == op:
            return x
    raise AssertionError(f"no {op} in {[x.operator for x in nodes(n)]}")


TOPN = "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM s) WHERE {cond}"


@pytest.mark.parametrize(
    ("cond", "start", "end"),
    [
        ("rn <= 3", 1, 3),
        ("rn < 3", 1, 2),
        ("rn = 1", 1, 1),
        ("rn BETWEEN 2 AND 4", 2, 4),
        ("rn > 1 AND rn <= 3", 2, 3),
        ("3 >= rn", 1, 3),
    ],
)
def test_filter_on_rank_becomes_the_rank_range(cond: str, start: int, end: int) -> None:
    root = physical(TOPN.format(cond=cond))
    rank = find(root, "Rank")
    assert (rank.params.rank_start, rank.params.rank_end) == (start, end)
    assert rank.params.partition_keys and rank.params.rank_type == "ROW_NUMBER"
    assert [o.descending for o in rank.params.order] == [True, False]
    assert [o.nulls_first for o in rank.params.order] == [False, True]
    assert rank.changelog_mode == "I,UB,UA,D"
    # the absorbed condition leaves no filter on the rank above it
    assert all(x.params.condition is None for x in nodes(root) if x.operator == "Calc")


def test_other_conditions_stay_above_the_rank() -> None:
    root = physical(TOPN.format(cond="rn <= 2 AND v > 5"))
    assert root.operator == "Calc" and root.params.condition is not None
    assert find(root, "Rank").params.rank_end == 2


def test_rank_number_dropped_when_not_selected() -> None:
    sql = "SELECT k, v FROM (SELECT *, RANK() OVER (PARTITION BY k ORDER BY v) AS r FROM s) WHERE r <= 2"
    rank = find(physical(sql), "Rank")
    assert rank.params.output_rank is False and rank.params.rank_type == "RANK"
    kept = find(physical(TOPN.format(cond="rn <= 2")), "Rank")
    assert kept.params.output_rank is True


def test_cte_and_view_with_ranking() -> None:
    cte = "WITH r AS (SELECT *, DENSE_RANK() OVER (ORDER BY v) AS d FROM s) SELECT id FROM r WHERE d <= 2"
    rank = find(physical(cte), "Rank")
    assert rank.params.rank_type == "DENSE_RANK" and rank.params.partition_keys == ()
    view = "CREATE VIEW top AS SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM s;"
    assert find(physical("SELECT id FROM top WHERE rn = 2", extra=view), "Rank").params.rank_start == 2


def test_retracting_input_uses_retract_strategy() -> None:
    sql = (
        "SELECT * FROM (SELECT k, t, ROW_NUMBER() OVER (ORDER BY t DESC) AS rn "
        "FROM (SELECT k, SUM(v) AS t FROM s GROUP BY k)) WHERE rn <= 2"
    )
    from planner.explain import physical_line

    rank = find(physical(sql), "Rank")
    assert "strategy=[RetractStrategy]" in physical_line(rank)


def test_unbounded_ranking_in_streaming_is_refused_batch_runs_it() -> None:
    sql = "SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM s"
    with pytest.raises(UnsupportedSqlError, match="time attribute"):
        physical(sql)
    assert find(physical(sql, "batch"), "Rank").params.rank_end is None


@pytest.mark.parametrize(("direction", "keep_last", "mode"), [("ASC", False, "I"), ("DESC", True, "I,UB,UA")])
def test_row_number_one_on_rowtime_is_deduplicate(direction: str, keep_last: bool, mode: str) -> None:
    sql = (
        "SELECT usr, action FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY ts "
        f"{direction}) AS rn FROM ev) WHERE rn = 1"
    )
    d = find(physical(sql), "Deduplicate")
    assert d.params.keep_last is keep_last and d.params.time_kind == "ROWTIME"
    assert d.changelog_mode == mode
    assert find(physical(sql, "batch"), "Rank").params.rank_end == 1


def test_proctime_dedup() -> None:
    sql = "SELECT usr FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY pt) AS rn FROM ev) WHERE rn = 1"
    assert find(physical(sql), "Deduplicate").params.time_kind == "PROCTIME"


WINDOWED = (
    "SELECT * FROM (SELECT *, {fn}() OVER (PARTITION BY window_start, window_end, usr ORDER BY ts {d}) AS rn "
    "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn {cond}"
)


def test_window_topn_and_window_dedup() -> None:
    wr = find(physical(WINDOWED.format(fn="ROW_NUMBER", d="DESC", cond="<= 2")), "WindowRank")
    assert wr.changelog_mode == "I" and wr.params.window.kind == "TUMBLE"
    assert wr.params.window_end_index in wr.params.partition_keys
    sql = WINDOWED.format(fn="ROW_NUMBER", d="ASC", cond="= 1").replace("SELECT *", "SELECT usr, action", 1)
    assert find(physical(sql), "WindowDeduplicate").changelog_mode == "I"


def test_window_topn_with_rank_is_refused_in_streaming_only() -> None:
    sql = WINDOWED.format(fn="RANK", d="DESC", cond="<= 2")
    with pytest.raises(UnsupportedSqlError, match="only ROW_NUMBER"):
        physical(sql)
    assert find(physical(sql, "batch"), "Rank").params.rank_type == "RANK"


# ---------------------------------------------------------------------- ORDER BY / LIMIT
def test_order_by_limit_operators() -> None:
    sl = find(physical("SELECT k, v FROM s ORDER BY v DESC, k LIMIT 3"), "SortLimit")
    assert sl.params.fetch == 3 and sl.params.offset == 0 and sl.changelog_mode == "I,UB,UA,D"
    assert [o.nulls_first for o in sl.params.order] == [False, True]
    assert find(physical("SELECT k FROM s ORDER BY v", "batch"), "Sort").params.order[0].index == 1
    lim = find(physical("SELECT k FROM s LIMIT 2 OFFSET 1"), "Limit")
    assert (lim.params.offset, lim.params.fetch, lim.changelog_mode) == (1, 2, "I")
    ts = find(physical("SELECT usr, ts FROM ev ORDER BY ts, usr DESC"), "TemporalSort")
    assert ts.changelog_mode == "I"


@pytest.mark.parametrize("limit", ["-1", "0", "2"])
def test_sort_default_limit_gives_a_batch_order_by_without_limit_a_limit(limit: str) -> None:
    """'table.exec.sort.default-limit' > 0: a BATCH ORDER BY without LIMIT and OFFSET gets
    that LIMIT (Flink's FlinkLogicalSortBatchConverter); one with LIMIT or OFFSET keeps its
    own, and STREAMING ignores it (Flink's stream converter does not read it)."""
    from streamsql import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.get_config().set("table.exec.sort.default-limit", limit)
    env.execute_sql("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (3), (1), (4), (1), (5)) AS v(x)")
    got = [r[0] for r in env.execute_sql("SELECT x FROM t ORDER BY x DESC").collect()]
    assert got == ([5, 4, 3, 1, 1] if int(limit) <= 0 else [5, 4])
    plan = env.explain_sql("SELECT x FROM t ORDER BY x DESC")
    assert ("SortLimit(" in plan) == (int(limit) > 0)
    assert [r[0] for r in env.execute_sql("SELECT x FROM t ORDER BY x LIMIT 3").collect()] == [1, 1, 3]
    assert [r[0] for r in env.execute_sql("SELECT x FROM t ORDER BY x OFFSET 1 ROWS").collect()] == [1, 3, 4, 5]
    # STREAMING: a non-time ORDER BY still needs a LIMIT (the option does not give it one)
    streaming = _planner("streaming")
    streaming.config["table.exec.sort.default-limit"] = limit
    (st,) = [s for s in parse_script("SELECT k FROM s ORDER BY v") if isinstance(s, Query)]
    with pytest.raises(SqlError, match="non-time-attribute"):
        streaming.optimize(streaming.bind(st), st.sql)


def test_order_by_resolution() -> None:
    # ordinal, alias, and a column that is not selected (hidden, projected away after the sort)
    root = physical("SELECT id AS x, k FROM s ORDER BY 2 DESC, x, v LIMIT 1", "batch")
    sl = find(root, "SortLimit")
    assert [o.index for o in sl.params.order] == [1, 0, 2]
    assert [f.name for f in root.fields] == ["x", "k"]


def test_streaming_sort_on_non_time_column_is_refused() -> None:
    with pytest.raises(SqlError, match="non-time-attribute"):
        physical("SELECT k FROM s ORDER BY v")


def test_set_operation_order_by() -> None:
    sql = "SELECT id, v FROM s UNION ALL SELECT id, v FROM s ORDER BY v DESC LIMIT 2"
    assert find(physical(sql), "SortLimit").params.fetch == 2


# ---------------------------------------------------------------------- QUALIFY
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM s QUALIFY rn <= 3",
        "SELECT id, k, v FROM s QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) <= 3",
    ],
)
def test_qualify_on_a_rank_is_a_topn(sql: str) -> None:
    root = physical(sql)
    rank = find(root, "Rank")
    assert (rank.params.rank_start, rank.params.rank_end) == (1, 3)
    assert all(x.params.condition is None for x in nodes(root) if x.operator == "Calc")
    assert [f.name for f in root.fields] == (["id", "k", "v", "rn"] if "AS rn" in sql else ["id", "k", "v"])


def test_qualify_keeps_other_conditions_and_dedups_on_rowtime() -> None:
    root = physical("SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) AS rn FROM s QUALIFY rn <= 2 AND v > 5")
    assert find(root, "Rank").params.rank_end == 2
    assert any(x.params.condition is not None for x in nodes(root) if x.operator == "Calc")
    dedup = "SELECT usr, action FROM ev QUALIFY ROW_NUMBER() OVER (PARTITION BY usr ORDER BY ts DESC) = 1"
    assert find(physical(dedup), "Deduplicate").params.keep_last is True


def test_qualify_then_order_by_and_limit() -> None:
    root = physical(
        "SELECT id, k FROM s QUALIFY ROW_NUMBER() OVER (PARTITION BY k ORDER BY v) = 1 ORDER BY id LIMIT 2", "batch"
    )
    assert find(root, "Rank").params.rank_end == 1
    assert [f.name for f in root.fields] == ["id", "k"]


def test_qualify_without_a_window_function_is_refused() -> None:
    with pytest.raises(SqlError, match="QUALIFY expression 'v > 5' must contain a window function") as e:
        physical("SELECT id FROM s QUALIFY v > 5")
    assert (e.value.line, e.value.column) == (1, 26)


def test_limit_all_is_no_limit() -> None:
    assert not [
        x
        for x in nodes(physical("SELECT id FROM s LIMIT ALL", "batch"))
        if x.operator in ("Limit", "SortLimit", "Sort")
    ]
    sort = physical("SELECT id FROM s ORDER BY id LIMIT ALL", "batch")
    assert sort.operator == "Sort"
