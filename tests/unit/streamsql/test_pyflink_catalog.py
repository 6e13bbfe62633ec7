"""pyflink.table.catalog's Catalog over a TableEnvironment: databases, tables, functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.catalog import CatalogDatabase, CatalogException, CatalogFunction, CatalogPartitionSpec, ObjectPath


def test_catalog_methods_are_the_sql_statements_of_the_same_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "catalog_udfs.py").write_text(
        "from streamsql.udf import udf\nfrom streamsql.types import DataTypes\n\n"
        "@udf(result_type=DataTypes.BIGINT())\ndef twice(x):\n    return 2 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    assert t_env.get_current_catalog() == "default_catalog" and t_env.list_catalogs() == ["default_catalog"]
    catalog = t_env.get_catalog("default_catalog")
    assert t_env.get_catalog("nope") is None
    catalog.create_database("sales", CatalogDatabase.create_instance({"owner": "ann"}, "the sales db"), False)
    assert catalog.database_exists("sales") and "sales" in t_env.list_databases()
    db = catalog.get_database("sales")
    assert db.get_properties() == {"owner": "ann"} and db.get_comment() == "the sales db"
    t_env.execute_sql("CREATE TABLE sales.orders (id BIGINT, amount DOUBLE) WITH ('connector' = 'blackhole')")
    path = ObjectPath.from_string("sales.orders")
    assert catalog.list_tables("sales") == ["orders"] and catalog.table_exists(path)
    assert catalog.get_table(path).get_unresolved_schema().get_column_names() == ["id", "amount"]
    catalog.rename_table(path, "orders2", False)
    assert catalog.list_tables("sales") == ["orders2"]
    t_env.use_database("sales")
    assert t_env.get_current_database() == "sales" and t_env.list_tables() == ["orders2"]
    catalog.create_function(
        ObjectPath("sales", "twice"), CatalogFunction.create_instance("catalog_udfs.twice", "PYTHON"), False
    )
    assert catalog.function_exists(ObjectPath("sales", "twice"))
    assert catalog.get_function(ObjectPath("sales", "twice")).get_class_name() == "catalog_udfs.twice"
    assert list(t_env.execute_sql("SELECT twice(21)").collect()) == [(42,)]
    catalog.drop_table(ObjectPath("sales", "orders2"), False)
    assert not catalog.table_exists(ObjectPath("sales", "orders2"))
    with pytest.raises(CatalogException, match="Partition metadata .* not kept"):
        catalog.drop_partition(ObjectPath("sales", "orders2"), CatalogPartitionSpec({"d": "1"}), False)


def test_default_database_and_a_table_name_with_a_dot() -> None:
    """A catalog's own default database; a quoted path part keeps its dot (as the jdbc
    catalog's `schema.table` names need), in from_path and in Catalog.get_table."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    t_env.execute_sql("CREATE CATALOG notes WITH ('type' = 'generic_in_memory', 'default-database' = 'inbox')")
    catalog = t_env.get_catalog("notes")
    assert catalog.get_default_database() == "inbox"
    t_env.execute_sql("CREATE TABLE notes.inbox.`a.b` (id INT, `c``d` STRING) WITH ('connector' = 'blackhole')")
    assert t_env.from_path("notes.inbox.`a.b`").get_schema().get_field_names() == ["id", "c`d"]
    assert catalog.get_table(ObjectPath("inbox", "a.b")).get_unresolved_schema().get_column_names() == ["id", "c`d"]
