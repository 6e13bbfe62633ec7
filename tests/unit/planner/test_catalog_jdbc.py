"""The `jdbc` catalog type without a server (planner/catalog_jdbc.py): Flink's PostgreSQL type
mapping from `pg_type.typname` and `atttypmod`, the options checked before connecting, and
the lazy registration (the module loads when a CREATE CATALOG names the type). The catalog
against a real server: tests/e2e/test_jdbc_catalog.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from planner.catalog_store import CATALOG_TYPES, catalog_type_names, create_catalog_store
from planner.errors import SqlValidationError
from streamsql import EnvironmentSettings, TableEnvironment


def _type(typname: str, typmod: int = -1) -> str | None:
    from planner.catalog_jdbc import flink_type

    t = flink_type(typname, typmod)
    return None if t is None else str(t)


@pytest.mark.parametrize(
    ("typname", "typmod", "expected"),
    [
        ("int2", -1, "SMALLINT"),
        ("int4", -1, "INT"),
        ("int8", -1, "BIGINT"),
        ("float4", -1, "FLOAT"),
        ("float8", -1, "DOUBLE"),
        ("bool", -1, "BOOLEAN"),
        ("bytea", -1, "BYTES"),
        ("text", -1, "STRING"),
        ("date", -1, "DATE"),
        ("uuid", -1, "VARCHAR(36)"),
        # numeric(p, s): typmod = (p << 16 | s) + 4; unconstrained numeric is DECIMAL(38, 18)
        ("numeric", (10 << 16 | 2) + 4, "DECIMAL(10, 2)"),
        ("numeric", (38 << 16) + 4, "DECIMAL(38, 0)"),
        ("numeric", -1, "DECIMAL(38, 18)"),
        ("numeric", (39 << 16) + 4, None),  # beyond Flink's DECIMAL
        # char(n) / varchar(n): typmod = n + 4; varchar without a length is STRING
        ("bpchar", 3 + 4, "CHAR(3)"),
        ("varchar", 20 + 4, "VARCHAR(20)"),
        ("varchar", -1, "STRING"),
        # time / timestamp(p): typmod = p; 6 when unset
        ("time", 3, "TIME(3)"),
        ("timestamp", -1, "TIMESTAMP(6)"),
        ("timestamp", 0, "TIMESTAMP(0)"),
        ("timestamptz", 3, "TIMESTAMP_LTZ(3)"),
        # arrays: the element's modifier
        ("_int4", -1, "ARRAY<INT>"),
        ("_varchar", 5 + 4, "ARRAY<VARCHAR(5)>"),
        ("_numeric", (5 << 16 | 1) + 4, "ARRAY<DECIMAL(5, 1)>"),
        ("_timestamptz", -1, "ARRAY<TIMESTAMP_LTZ(6)>"),
        # not in Flink's mapping
        ("jsonb", -1, None),
        ("json", -1, None),
        ("interval", -1, None),
        ("_uuid", -1, None),
        ("money", -1, None),
    ],
)
def test_postgres_type_mapping(typname: str, typmod: int, expected: str | None) -> None:
    assert _type(typname, typmod) == expected


def _create(**options: str) -> SqlValidationError:
    base = {"type": "jdbc", "default-database": "shop", "username": "u", "password": "p"}
    with pytest.raises(SqlValidationError) as info:
        create_catalog_store("c", {**base, **options})
    return info.value


def test_options_are_checked_before_connecting() -> None:
    assert "jdbc" in catalog_type_names()
    e = _create()
    assert "Missing required options are:\n\nbase-url" in e.message
    assert (
        "Unsupported options found for 'jdbc'" in _create(**{"base-url": "jdbc:postgresql://h:1", "url": "x"}).message
    )
    assert "must not name a database ('shop')" in _create(**{"base-url": "jdbc:postgresql://h:1/shop"}).message
    assert "speaks PostgreSQL" in _create(**{"base-url": "jdbc:mysql://h:3306"}).message
    bad_mode = _create(**{"base-url": "jdbc:postgresql://h:1", "compatible-mode": "oracle"})
    assert "'compatible-mode' = 'oracle'" in bad_mode.message
    assert "jdbc" in CATALOG_TYPES


def test_the_module_is_not_loaded_at_start_up() -> None:
    code = "import sys; from streamsql import TableEnvironment; print('planner.catalog_jdbc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_create_catalog_that_cannot_connect_keeps_the_hint() -> None:
    """CREATE CATALOG reports the catalog type's connection error at the statement, with its
    hint (the statement layer used to re-raise the message alone)."""
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    with pytest.raises(SqlValidationError) as err:
        env.execute_sql(
            "CREATE CATALOG pg WITH ('type' = 'jdbc', 'default-database' = 'd', 'username' = 'u', "
            "'password' = 'p', 'base-url' = 'jdbc:postgresql://127.0.0.1:1')"
        )
    assert "Failed connecting to jdbc:postgresql://127.0.0.1:1/d via JDBC" in err.value.message
    assert err.value.hint is not None and "'base-url'" in err.value.hint
    assert "pg" not in env.list_catalogs()
