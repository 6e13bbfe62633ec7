"""The datagen connector: bounds, kinds, determinism, seek, throttling, speed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from runtime.connectors.base import SourceContext, get_connector
from runtime.errors import ConnectorError
from runtime.types import ARRAY, BIGINT, BOOLEAN, DECIMAL, DOUBLE, INT, STRING, TIMESTAMP, VARCHAR, DataType, Field

SCHEMA = (
    Field("id", BIGINT()),
    Field("k", INT()),
    Field("s", STRING()),
    Field("x", DOUBLE()),
    Field("p", DECIMAL(6, 2)),
    Field("b", BOOLEAN()),
    Field("ts", TIMESTAMP(3)),
    Field("arr", ARRAY(INT())),
)


def make(options, schema=SCHEMA, mode="BATCH", projection=None):
    return get_connector("datagen").create_source(options, schema, projection, SourceContext(mode))


def drain(reader, n=1000):
    batches = []
    while (b := reader.read(n)) is not None:
        batches.append(b)
    return batches


def test_bounded_random_with_ranges():
    opts = {
        "number-of-rows": "5000",
        "fields.k.min": "5",
        "fields.k.max": "9",
        "fields.s.length": "7",
        "fields.x.min": "0",
        "fields.x.max": "1",
        "fields.p.min": "-10",
        "fields.p.max": "10",
        "fields.ts.max-past": "1 h",
        "fields.arr.length": "2",
    }
    source = make(opts)
    assert source.bounded and source.total_rows() == 5000
    assert get_connector("datagen").is_bounded(opts)
    rows = [r for b in drain(source.create_reader("0")) for r in b.to_pylist()]
    assert len(rows) == 5000
    assert {r["k"] for r in rows} == {5, 6, 7, 8, 9}
    assert all(len(r["s"]) == 7 and set(r["s"]) <= set("0123456789abcdef") for r in rows)
    assert all(0 <= r["x"] <= 1 and -10 <= r["p"] <= 10 for r in rows)
    assert all(len(r["arr"]) == 2 for r in rows)
    now = time.time()
    assert all(now - 3700 <= r["ts"].timestamp() <= now + 5 for r in rows[:100])


def test_sequence_bounds_the_source_and_null_rate():
    schema = (Field("id", INT()), Field("name", VARCHAR(10)), Field("n", INT()))
    opts = {
        "fields.id.kind": "sequence",
        "fields.id.start": "10",
        "fields.id.end": "19",
        "fields.name.kind": "sequence",
        "fields.name.start": "1",
        "fields.name.end": "100",
        "fields.n.null-rate": "1.0",
    }
    assert get_connector("datagen").is_bounded(opts)
    source = make(opts, schema)
    table_rows = [r for b in drain(source.create_reader("0"), 3) for r in b.to_pylist()]
    assert [r["id"] for r in table_rows] == list(range(10, 20))
    assert [r["name"] for r in table_rows] == [str(i) for i in range(1, 11)]
    assert all(r["n"] is None for r in table_rows)


def test_deterministic_and_seek_resumes_exactly():
    opts = {"number-of-rows": "200000"}
    a = np.concatenate([b.column("id").to_numpy() for b in drain(make(opts).create_reader("0"), 7000)])
    b_reader = make(opts).create_reader("0")
    b_reader.read(70_001)
    offset = b_reader.offset()
    assert offset == {"rows": 70_001}
    fresh = make(opts).create_reader("0")
    fresh.seek(offset)
    rest = np.concatenate([b.column("id").to_numpy() for b in drain(fresh, 10_000)])
    assert len(a) == 200_000
    assert np.array_equal(rest, a[70_001:])
    s1 = make(opts).create_reader("0").read(5).column("s").to_pylist()
    assert s1 == make(opts).create_reader("0").read(5).column("s").to_pylist()


def test_projection():
    source = make({"number-of-rows": "3"}, projection=[2, 0])
    batch = source.create_reader("0").read(10)
    assert batch.schema.names == ["s", "id"] and batch.num_rows == 3


def test_unbounded_streaming_throttles():
    source = make({"rows-per-second": "1000"}, (Field("id", INT()),), mode="STREAMING")
    assert not source.bounded
    assert not get_connector("datagen").is_bounded({"rows-per-second": "1000"})
    reader = source.create_reader("0")
    # 200 rows at 1000 per second take at least 0.2 s however fast the machine (a slow one
    # only takes longer: no upper bound on the time, and the rows are counted, not timed)
    start = time.monotonic()
    n = 0
    while n < 200:
        b = reader.read(100_000)
        assert b is not None
        n += b.num_rows
        assert n <= 1 + int((time.monotonic() - start) * 1000) + 1, "more rows than the rate allows"
    assert time.monotonic() - start >= 0.19


def test_bad_options():
    with pytest.raises(ConnectorError):
        make({"fields.id.kind": "sequence"})
    with pytest.raises(ConnectorError):
        make({"fields.k.min": "9", "fields.k.max": "1", "number-of-rows": "1"}).create_reader("0").read(1)


def test_millions_of_rows_in_full_batches():
    """A large bounded run yields every row once, in batches of the asked size.

    Its speed is measured by benchmarks, not asserted here (the machine is shared)."""
    schema = (Field("id", BIGINT()), Field("k", INT()), Field("x", DOUBLE()))
    reader = make({"number-of-rows": "2000000"}, schema).create_reader("0")
    sizes = [b.num_rows for b in drain(reader, 500_000)]
    assert sum(sizes) == 2_000_000
    assert max(sizes) <= 500_000


def test_binary_sequence_is_the_values_eight_big_endian_bytes():
    """Flink's sequence generator for BINARY/VARBINARY: Longs.toByteArray(value)."""
    schema = (Field("b", DataType("VARBINARY", precision=4)),)
    source = make({"fields.b.kind": "sequence", "fields.b.start": "255", "fields.b.end": "257"}, schema)
    rows = [r for split in source.splits() for b in drain(source.create_reader(split)) for r in b.to_pylist()]
    assert [r["b"] for r in rows] == [(v).to_bytes(8, "big") for v in (255, 256, 257)]
