"""Shared data for the Table API tests: our own small tables, in both runtime modes."""

from __future__ import annotations

import datetime

import pytest

from streamsql import DataTypes, EnvironmentSettings, Schema, Table, TableEnvironment

T0 = datetime.datetime(2024, 1, 1, 10, 0, 0)
CLICKS = [
    ("alice", "/home", T0 + datetime.timedelta(seconds=1), 3),
    ("bob", "/cart", T0 + datetime.timedelta(seconds=4), 5),
    ("alice", "/cart", T0 + datetime.timedelta(seconds=12), 7),
    ("carol", "/home", T0 + datetime.timedelta(seconds=15), None),
    ("alice", "/home", T0 + datetime.timedelta(seconds=31), 2),
    ("bob", "/item", T0 + datetime.timedelta(seconds=33), 1),
]
CLICKS_SCHEMA = (
    Schema.new_builder()
    .column("user_name", DataTypes.STRING())
    .column("url", DataTypes.STRING())
    .column("ts", DataTypes.TIMESTAMP(3))
    .column("v", DataTypes.INT())
    .watermark("ts", "ts - INTERVAL '1' SECOND")
    .build()
)


@pytest.fixture(params=["streaming", "batch"])
def env(request: pytest.FixtureRequest) -> TableEnvironment:
    settings = (
        EnvironmentSettings.in_streaming_mode() if request.param == "streaming" else EnvironmentSettings.in_batch_mode()
    )
    return TableEnvironment.create(settings)


@pytest.fixture
def clicks(env: TableEnvironment) -> Table:
    return env.from_elements(CLICKS, CLICKS_SCHEMA)


def rows(table: Table) -> list[tuple]:
    """The final table (changelog applied) as sorted tuples."""
    return sorted((tuple(r.values()) for r in table.to_arrow().to_pylist()), key=repr)
