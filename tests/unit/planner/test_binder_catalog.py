"""Catalog: resolved schemas (computed columns, time attributes, keys), LIKE merging,
IF [NOT] EXISTS, temporary shadowing, views, DESCRIBE, lookups with suggestions."""

from __future__ import annotations

import pytest

from planner.catalog import Catalog
from planner.catalog_objects import CatalogView
from planner.errors import SqlValidationError
from planner.parse import parse_script
from planner.statements import CreateTable, CreateView, Drop

BASE = """
CREATE TABLE orders (
  id INT,
  qty INT,
  price DECIMAL(8, 2),
  ts TIMESTAMP(3),
  total AS qty * price,
  pt AS PROCTIME(),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
"""


def run(script: str, cat: Catalog | None = None) -> Catalog:
    cat = cat or Catalog()
    for st in parse_script(script):
        if isinstance(st, CreateTable):
            cat.create_table(st)
        elif isinstance(st, CreateView):
            cat.create_view(st)
        elif isinstance(st, Drop):
            cat.drop(st)
    return cat


def test_resolved_schema_types_and_time_attributes() -> None:
    t = run(BASE).lookup(("orders",))
    types = {c.name: str(c.type) for c in t.columns}
    assert types == {
        "id": "INT NOT NULL",
        "qty": "INT",
        "price": "DECIMAL(8, 2)",
        "ts": "TIMESTAMP(3) *ROWTIME*",
        "total": "DECIMAL(19, 2)",  # INT * DECIMAL(8, 2): Flink's p1 + p2 + 1
        "pt": "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*",
    }
    assert [f.name for f in t.physical_fields] == ["id", "qty", "price", "ts"]
    assert t.rowtime_index == 3 and t.watermark_expr.name == "minus"
    assert t.table_info().path == ("default_catalog", "default_database", "orders")


def test_describe_rows() -> None:
    rows = run(BASE).describe("orders")
    assert rows[0] == ("id", "INT", False, "PRI(id)", "", "")
    ts = rows[3]
    assert ts[1] == "TIMESTAMP(3) *ROWTIME*" and ts[5] == "`ts` - INTERVAL '5' SECOND"
    assert rows[4][4] == "AS `qty` * `price`"


def test_watermark_errors() -> None:
    with pytest.raises(SqlValidationError, match="rowtime attribute field 'tss' is not defined"):
        run("CREATE TABLE x (ts TIMESTAMP(3), WATERMARK FOR tss AS tss) WITH ('connector' = 'datagen');")
    with pytest.raises(SqlValidationError, match="Invalid data type of time field"):
        run("CREATE TABLE x (ts BIGINT, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen');")


def test_if_not_exists_temporary_shadowing_and_drop() -> None:
    cat = run(BASE)
    with pytest.raises(SqlValidationError, match="already exists"):
        run(BASE, cat)
    assert cat.create_table(parse_script(BASE.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))[0]) is False
    run("CREATE TEMPORARY TABLE orders (a INT) WITH ('connector' = 'datagen');", cat)
    assert [c.name for c in cat.lookup("orders").columns] == ["a"]
    run("DROP TEMPORARY TABLE orders;", cat)
    assert cat.lookup("orders").columns[0].name == "id"
    run("DROP TABLE IF EXISTS nope;", cat)
    with pytest.raises(SqlValidationError, match="does not exist"):
        run("DROP TABLE nope;", cat)
    run("DROP TABLE orders;", cat)
    assert cat.list_tables() == []


def test_like_merging() -> None:
    cat = run(BASE)
    run(
        "CREATE TABLE o2 (extra STRING) WITH ('path' = 'o2.csv') LIKE orders (EXCLUDING GENERATED);",
        cat,
    )
    o2 = cat.lookup("o2")
    assert [c.name for c in o2.columns] == ["id", "qty", "price", "ts", "extra"]
    assert o2.options["path"] == "o2.csv" and o2.options["format"] == "csv"  # OVERWRITING OPTIONS default
    assert o2.primary_key == ("id",) and o2.rowtime_index == 3
    run("CREATE TABLE o3 WITH ('connector' = 'datagen') LIKE orders (EXCLUDING ALL);", cat)
    o3 = cat.lookup("o3")
    assert o3.options == {"connector": "datagen"} and o3.watermark is None and o3.primary_key is None
    with pytest.raises(SqlValidationError, match="already exists an option"):
        run("CREATE TABLE o4 WITH ('path' = 'x') LIKE orders (INCLUDING OPTIONS);", cat)


def test_views_and_lookup_suggestions() -> None:
    cat = run(BASE + "CREATE VIEW big AS SELECT id, total FROM orders WHERE qty > 10;")
    v = cat.lookup("big")
    assert isinstance(v, CatalogView)
    assert [(f.name, str(f.type)) for f in v.fields] == [("id", "INT NOT NULL"), ("total", "DECIMAL(19, 2)")]
    assert cat.list_views() == ["big"] and cat.list_tables() == ["big", "orders"]
    with pytest.raises(SqlValidationError) as info:
        cat.lookup("order")
    assert info.value.hint == "Did you mean 'orders'?"
