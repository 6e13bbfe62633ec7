"""Shared helpers for the connector tests."""

from __future__ import annotations

import pyarrow as pa
import pytest

from runtime.connectors.base import SourceContext, get_connector
from runtime.types import Field


@pytest.fixture
def streaming() -> SourceContext:
    return SourceContext("STREAMING")


@pytest.fixture
def batch_ctx() -> SourceContext:
    return SourceContext("BATCH")


def read_all(
    options: dict[str, str], schema: tuple[Field, ...], projection=None, mode: str = "BATCH", max_rows: int = 1000
) -> pa.Table:
    """Read every split of a connector's source into one table."""
    factory = get_connector(options["connector"])
    opts = {k: v for k, v in options.items() if k != "connector"}
    source = factory.create_source(opts, schema, projection, SourceContext(mode))
    batches = []
    for split in source.splits():
        reader = source.create_reader(split)
        while (b := reader.read(max_rows)) is not None:
            batches.append(b)
        reader.close()
    if not batches:
        return pa.table({f.name: pa.array([], f.type.to_arrow()) for f in source.produced_schema})
    return pa.Table.from_batches(batches)
