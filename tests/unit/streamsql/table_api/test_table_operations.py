"""Table operations on our own data, in both modes (the `env` fixture)."""

from __future__ import annotations

import datetime

import pytest
from tapi_data import T0, rows

from streamsql import Table, TableEnvironment
from streamsql.expressions import UNBOUNDED_RANGE, col, lit, row_interval
from streamsql.window import Over, Session, Slide, Tumble


def test_select_where_filter(clicks: Table) -> None:
    t = clicks.where(col("user_name") == "alice").select(col("url"), (col("v") * 10).alias("v10"))
    assert t.get_schema().get_field_names() == ["url", "v10"]
    assert rows(t) == [("/cart", 70), ("/home", 20), ("/home", 30)]
    assert rows(clicks.filter(col("v").is_null).select(col("user_name"))) == [("carol",)]
    # select by name strings as well
    assert rows(clicks.select("user_name").where(col("user_name").like("b%"))) == [("bob",), ("bob",)]


def test_column_operations(clicks: Table) -> None:
    t = clicks.select(col("user_name"), col("v"))
    added = t.add_columns((col("v") + 1).alias("v1"))
    assert added.get_schema().get_field_names() == ["user_name", "v", "v1"]
    replaced = added.add_or_replace_columns((col("v") * 2).alias("v"), lit("x").alias("tag"))
    assert replaced.get_schema().get_field_names() == ["user_name", "v", "v1", "tag"]
    assert ("bob", 10, 6, "x") in rows(replaced)
    renamed = replaced.rename_columns(col("user_name").alias("u"), col("v1").alias("w"))
    assert renamed.get_schema().get_field_names() == ["u", "v", "w", "tag"]
    dropped = renamed.drop_columns(col("tag"), col("v"))
    assert dropped.get_schema().get_field_names() == ["u", "w"]
    assert ("bob", 6) in rows(dropped)


def test_distinct(clicks: Table) -> None:
    assert rows(clicks.select(col("url")).distinct()) == [("/cart",), ("/home",), ("/item",)]


def test_group_by_aggregates(clicks: Table) -> None:
    t = clicks.group_by(col("user_name")).select(
        col("user_name"),
        col("url").count.alias("n"),
        col("url").count.distinct.alias("nd"),
        col("v").sum.alias("s"),
        col("v").sum.distinct.alias("sd"),
        col("v").min.alias("mn"),
        col("v").max.alias("mx"),
        col("v").avg.alias("a"),
    )
    assert rows(t) == [
        ("alice", 3, 2, 12, 12, 2, 7, 4),
        ("bob", 2, 2, 6, 6, 1, 5, 3),
        ("carol", 1, 1, None, None, None, None, None),
    ]
    total = clicks.select(col("v").sum.alias("s"), lit(1).count.alias("n"))
    assert rows(total) == [(18, 6)]


def test_tumble_slide_session_windows(clicks: Table) -> None:
    w = col("w")
    tumble = (
        clicks.window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("user_name"))
        .select(col("user_name"), w.start.alias("ws"), w.end.alias("we"), col("url").count.alias("n"))
    )
    got = rows(tumble)
    assert ("alice", T0, T0 + datetime.timedelta(seconds=10), 1) in got
    assert sum(r[3] for r in got) == 6
    slide = (
        clicks.window(Slide.over(lit(20).seconds).every(lit(10).seconds).on(col("ts")).alias("w"))
        .group_by(w)
        .select(w.start.alias("ws"), lit(1).count.alias("n"))
    )
    assert sum(r[1] for r in rows(slide)) == 12  # every row is in two windows
    session = (
        clicks.window(Session.with_gap(lit(15).seconds).on(col("ts")).alias("w"))
        .group_by(w, col("user_name"))
        .select(col("user_name"), w.start.alias("ss"), w.end.alias("se"), lit(1).count.alias("n"))
    )
    alice = [r for r in rows(session) if r[0] == "alice"]
    assert [r[3] for r in alice] == [2, 1]


def test_over_windows(clicks: Table) -> None:
    unbounded = Over.partition_by(col("user_name")).order_by(col("ts")).preceding(UNBOUNDED_RANGE).alias("w")
    t = clicks.over_window(unbounded).select(col("user_name"), col("ts"), col("url").count.over(col("w")).alias("c"))
    alice = [r[2] for r in rows(t) if r[0] == "alice"]
    assert sorted(alice) == [1, 2, 3]
    two = Over.order_by(col("ts")).preceding(row_interval(1)).alias("w")
    t2 = clicks.over_window(two).select(col("ts"), col("v").sum.over(col("w")).alias("s"))
    assert [r[1] for r in sorted(rows(t2))] == [3, 8, 12, 7, 2, 3]


def test_joins(env: TableEnvironment, clicks: Table) -> None:
    users = env.from_elements([("alice", "DE"), ("bob", "FR"), ("zoe", "US")], ["name", "country"])
    inner = clicks.join(users, col("user_name") == col("name")).select(col("user_name"), col("country"))
    assert len(rows(inner)) == 5
    left = clicks.left_outer_join(users, col("user_name") == col("name")).select(col("user_name"), col("country"))
    assert ("carol", None) in rows(left)
    right = clicks.right_outer_join(users, col("user_name") == col("name")).select(col("name"), col("url"))
    assert ("zoe", None) in rows(right)
    full = clicks.full_outer_join(users, col("user_name") == col("name")).select(col("user_name"), col("name"))
    assert ("carol", None) in rows(full) and (None, "zoe") in rows(full)
    crossed = clicks.join(users).where(col("user_name") == col("name")).select(col("url"), col("country"))
    expected = clicks.join(users, col("user_name") == col("name")).select(col("url"), col("country"))
    assert rows(crossed) == rows(expected) and len(rows(crossed)) == 5


def test_set_operations(env: TableEnvironment) -> None:
    a = env.from_elements([(1,), (1,), (2,), (3,)], ["x"])
    b = env.from_elements([(1,), (3,), (3,), (4,)], ["x"])
    assert rows(a.union(b)) == [(1,), (2,), (3,), (4,)]
    assert len(rows(a.union_all(b))) == 8
    assert rows(a.intersect(b)) == [(1,), (3,)]
    assert rows(a.intersect_all(b)) == [(1,), (3,)]
    assert rows(a.minus(b)) == [(2,)]
    assert rows(a.minus_all(b)) == [(1,), (2,)]


def test_order_offset_fetch_limit(env: TableEnvironment) -> None:
    t = env.from_elements([(i, f"k{i % 3}") for i in range(10)], ["n", "k"])
    ordered = t.order_by(col("n").desc)
    assert sorted(r[0] for r in rows(ordered.fetch(3))) == [7, 8, 9]
    assert sorted(r[0] for r in rows(ordered.offset(2).fetch(3))) == [5, 6, 7]
    assert sorted(r[0] for r in rows(t.order_by(col("n").asc).limit(2, offset=1))) == [1, 2]
    assert len(rows(t.limit(4))) == 4


def test_explain_is_the_plan_of_the_equivalent_sql(env: TableEnvironment) -> None:
    env.create_temporary_view("v", env.from_elements([(1, "a"), (2, "b")], ["n", "s"]))
    t = env.from_path("v").where(col("n") > 1).select(col("s"), (col("n") + 1).alias("m"))
    assert t.explain() == env.explain_sql("SELECT s, n + 1 AS m FROM v WHERE n > 1")
    g = env.from_path("v").group_by(col("s")).select(col("s"), col("n").sum.alias("t"))
    assert g.explain() == env.explain_sql("SELECT s, SUM(n) AS t FROM v GROUP BY s")


def test_schema_and_print_schema(clicks: Table, capsys: pytest.CaptureFixture[str]) -> None:
    schema = clicks.get_schema()
    assert schema.get_field_names() == ["user_name", "url", "ts", "v"]
    assert str(schema.get_field_data_type("v")) == "INT"
    assert schema.get_field_count() == 4 and schema.get_field_name(0) == "user_name"
    clicks.print_schema()
    out = capsys.readouterr().out
    assert "`ts` TIMESTAMP(3) *ROWTIME*" in out and out.startswith("(")
    assert clicks.user_name._column == "user_name"  # table.column is col('column')


def test_table_in_sql_and_views(env: TableEnvironment, clicks: Table) -> None:
    q = env.sql_query(f"SELECT user_name, COUNT(*) AS n FROM {clicks} GROUP BY user_name")
    assert ("alice", 3) in rows(q)
    env.create_temporary_view("clicks_view", clicks.where(col("v") > 2))
    assert "clicks_view" in env.list_tables() and "clicks_view" in env.list_views()
    assert not any(n.startswith("__memory") for n in env.list_tables())
    assert len(rows(env.from_path("clicks_view"))) == 3
    assert env.drop_temporary_view("clicks_view") is True
    assert env.drop_temporary_view("clicks_view") is False
    # a Table built from SQL continues with the Table API
    assert rows(q.where(col("n") > 1).select(col("user_name"))) == [("alice",), ("bob",)]
