"""Models as catalog objects: kept by the persistent catalog across a restart, in their
own namespace beside tables, and counted by DROP DATABASE's emptiness check."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.errors import SqlError
from streamsql import TableEnvironment
from streamsql.catalog import ObjectPath


def test_the_persistent_catalog_keeps_models_across_a_restart(tmp_path: Path) -> None:
    ddl = f"CREATE CATALOG p WITH ('type' = 'sqlite', 'path' = '{tmp_path}/catalog.db')"
    env = TableEnvironment.create({})
    env.execute_sql(ddl)
    env.execute_sql("CREATE DATABASE p.ml")
    env.execute_sql(
        "CREATE MODEL p.ml.m INPUT (q STRING COMMENT 'question') OUTPUT (a DOUBLE NOT NULL) "
        "COMMENT 'c' WITH ('provider' = 'openai')"
    )
    # a table of the same name lives in another namespace
    env.execute_sql("CREATE TABLE p.ml.m (x INT) WITH ('connector' = 'datagen')")
    env.execute_sql("DROP TABLE p.ml.m")
    with pytest.raises(SqlError, match="Database ml in catalog p is not empty"):  # the model is left
        env.execute_sql("DROP DATABASE p.ml")

    restarted = TableEnvironment.create({})
    restarted.execute_sql(ddl)
    assert [r[0] for r in restarted.execute_sql("SHOW MODELS FROM p.ml").collect()] == ["m"]
    rows = [tuple(r) for r in restarted.execute_sql("DESCRIBE MODEL p.ml.m").collect()]
    assert rows == [("q", "STRING", True, True, "question"), ("a", "DOUBLE", False, False, None)]
    restarted.execute_sql("ALTER MODEL p.ml.m SET ('task' = 'embedding')")
    text = next(iter(env.execute_sql("SHOW CREATE MODEL p.ml.m").collect()))[0]
    assert "'task' = 'embedding'" in text and "COMMENT 'c'" in text
    restarted.execute_sql("DROP MODEL p.ml.m")
    assert list(env.execute_sql("SHOW MODELS FROM p.ml").collect()) == []
    env.execute_sql("DROP DATABASE p.ml")


def test_table_and_catalog_api_list_rename_and_drop_models() -> None:
    env = TableEnvironment.create({})
    env.execute_sql("CREATE MODEL m INPUT (a INT) OUTPUT (b INT) WITH ('provider' = 'openai')")
    env.execute_sql("CREATE TEMPORARY MODEL tm INPUT (a INT) OUTPUT (b INT) WITH ('provider' = 'openai')")
    assert env.list_models() == ["m", "tm"] and env.list_temporary_models() == ["tm"]
    catalog = env.get_catalog("default_catalog")
    assert catalog.list_models("default_database") == ["m"]  # temporary models are the session's
    catalog.rename_model(ObjectPath("default_database", "m"), "m2", False)
    assert catalog.model_exists(ObjectPath("default_database", "m2"))
    assert env.drop_model("m2") is True and env.drop_model("m2") is False
    assert env.drop_temporary_model("tm") is True and env.list_models() == []
