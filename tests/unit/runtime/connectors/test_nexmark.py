"""The 'nexmark' connector: determinism, the generator's rules (GENERATOR.md), pacing, and
Nexmark q0-q2 end to end on it."""

from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from runtime.connectors.base import SourceContext, get_connector
from runtime.connectors.nexmark_gen import CHUNK_SIZE
from runtime.errors import ConnectorError
from runtime.types import BIGINT, INT, ROW, STRING, TIMESTAMP, Field

QUERIES = Path(__file__).parents[4] / "benchmarks" / "nexmark"
BASE = "2015-07-15 00:00:00"
BASE_MS = 1436918400000

PERSON = ROW(
    [
        ("id", BIGINT()),
        ("name", STRING()),
        ("emailAddress", STRING()),
        ("creditCard", STRING()),
        ("city", STRING()),
        ("state", STRING()),
        ("dateTime", TIMESTAMP(3)),
        ("extra", STRING()),
    ]
)
AUCTION = ROW(
    [
        ("id", BIGINT()),
        ("itemName", STRING()),
        ("description", STRING()),
        ("initialBid", BIGINT()),
        ("reserve", BIGINT()),
        ("dateTime", TIMESTAMP(3)),
        ("expires", TIMESTAMP(3)),
        ("seller", BIGINT()),
        ("category", BIGINT()),
        ("extra", STRING()),
    ]
)
BID = ROW(
    [
        ("auction", BIGINT()),
        ("bidder", BIGINT()),
        ("price", BIGINT()),
        ("channel", STRING()),
        ("url", STRING()),
        ("dateTime", TIMESTAMP(3)),
        ("extra", STRING()),
    ]
)
SCHEMA = (Field("event_type", INT()), Field("person", PERSON), Field("auction", AUCTION), Field("bid", BID))


def make(options: dict[str, str], projection=None, mode: str = "BATCH", schema=SCHEMA):
    opts = {"base-time": BASE, **options}
    return get_connector("nexmark").create_source(opts, schema, projection, SourceContext(mode))


def drain(reader, n: int) -> pa.Table:
    batches = []
    while (b := reader.read(n)) is not None:
        batches.append(b)
    return pa.Table.from_batches(batches, schema=batches[0].schema)


def events(num: int, **options: str) -> pa.Table:
    source = make({"events.num": str(num), **options})
    return drain(source.create_reader("0"), 8192)


def kind(table: pa.Table, name: str) -> pa.Table:
    """The ROW column `name` of the rows of that kind, flattened to a table."""
    code = {"person": 0, "auction": 1, "bid": 2}[name]
    rows = table.filter(pc.equal(table["event_type"], code))
    col = rows[name].combine_chunks()
    return pa.Table.from_arrays(col.flatten(), names=[f.name for f in col.type])


@pytest.fixture(scope="module")
def stream() -> pa.Table:
    """100,000 events (3 chunks) with the default options."""
    return events(100_000)


# ---------------------------------------------------------------------- determinism


def test_same_events_whatever_the_batch_sizes(stream: pa.Table) -> None:
    n = 70_000  # crosses two chunk boundaries
    full = stream.slice(0, n)
    for size in (1, 997, CHUNK_SIZE + 5):
        reader = make({"events.num": str(n)}).create_reader("0")
        if size == 1:  # one-row reads over a chunk boundary, then the rest at once
            reader.seek({"events": CHUNK_SIZE - 60})
            head = [reader.read(1) for _ in range(100)]
            assert pa.Table.from_batches(head).equals(full.slice(CHUNK_SIZE - 60, 100))
            continue
        assert drain(reader, size).equals(full)


def test_seek_resumes_exactly(stream: pa.Table) -> None:
    reader = make({"events.num": "60000"}).create_reader("0")
    first = pa.Table.from_batches([reader.read(5000), reader.read(7345)])
    offset = reader.offset()
    assert offset["events"] == 12_345
    again = make({"events.num": "60000"}).create_reader("0")
    again.seek(offset)
    rest = drain(again, 4096)
    assert pa.concat_tables([first, rest]).equals(stream.slice(0, 60_000))


def test_seed_changes_the_data_but_not_the_structure() -> None:
    a, b = events(2000), events(2000, seed="7")
    assert a["event_type"].equals(b["event_type"])
    assert not kind(a, "bid")["price"].equals(kind(b, "bid")["price"])
    assert kind(a, "person")["id"].equals(kind(b, "person")["id"])


def test_projection_produces_the_same_values(stream: pa.Table) -> None:
    source = make({"events.num": "5000"}, projection=[3, 0])
    assert [f.name for f in source.produced_schema] == ["bid", "event_type"]
    got = drain(source.create_reader("0"), 1000)
    assert got.column_names == ["bid", "event_type"]
    assert got["bid"].equals(stream["bid"].slice(0, 5000))


def test_declared_subset_of_row_fields() -> None:
    schema = (Field("bid", ROW([("price", BIGINT()), ("AUCTION", BIGINT())])),)
    got = drain(make({"events.num": "500"}, schema=schema).create_reader("0"), 100)
    full = events(500)
    assert got["bid"].combine_chunks().field("AUCTION").equals(full["bid"].combine_chunks().field("auction"))


def test_validation_errors() -> None:
    with pytest.raises(ConnectorError, match="event.num"):
        make({"event.num": "10"})
    with pytest.raises(ConnectorError, match="events.num"):
        make({"events.num": "ten"})
    with pytest.raises(ConnectorError, match="column 'foo'"):
        make({}, schema=(Field("foo", INT()),))
    with pytest.raises(ConnectorError, match="no field 'price2'"):
        make({}, schema=(Field("bid", ROW([("price2", BIGINT())])),))


def test_boundedness() -> None:
    factory = get_connector("nexmark")
    assert not factory.is_bounded({})
    assert factory.is_bounded({"events.num": "10"})
    assert factory.is_bounded({"stop-at": "10"})
    assert not factory.is_bounded({"events.num": "10", "keep-alive": "true"})
    reader = make({"events.num": "10", "keep-alive": "true"}).create_reader("0")
    assert reader.read(100).num_rows == 10
    assert reader.read(100).num_rows == 0  # idle, not finished
    assert drain(make({"events.num": "100", "stop-at": "42"}).create_reader("0"), 7).num_rows == 42


# ---------------------------------------------------------------------- the rules


def test_proportions_and_ids(stream: pa.Table) -> None:
    types = stream["event_type"].to_numpy()
    assert np.bincount(types).tolist() == [2000, 6000, 92000]  # 1 : 3 : 46
    assert types[:3].tolist() == [1, 1, 2] and types[48] == 0  # event id k + 2, type by id % 50
    persons, auctions = kind(stream, "person"), kind(stream, "auction")
    assert persons["id"].to_pylist() == list(range(1001, 1001 + 2000))
    assert auctions["id"].to_pylist() == list(range(1001, 1001 + 6000))
    custom = events(1000, **{"person.proportion": "2", "auction.proportion": "2", "bid.proportion": "6"})
    assert np.bincount(custom["event_type"].to_numpy()).tolist() == [200, 200, 600]


def _running_last(table: pa.Table, name: str) -> np.ndarray:
    """For each event, the largest id of that kind created at or before it; 1000 before the
    first one (the generator counts base-0 id 0 = 1000 as existing, but emits ids from 1001)."""
    code = {"person": 0, "auction": 1}[name]
    ids = pc.struct_field(table[name].combine_chunks(), [0]).to_numpy(zero_copy_only=False)
    is_kind = table["event_type"].to_numpy() == code
    return np.maximum.accumulate(np.where(is_kind, np.nan_to_num(ids, nan=1000), 1000).astype(np.int64))


def test_references_exist_or_are_close_ahead(stream: pa.Table) -> None:
    is_bid = stream["event_type"].to_numpy() == 2
    last_p = _running_last(stream, "person")[is_bid]
    last_a = _running_last(stream, "auction")[is_bid]
    bids = kind(stream, "bid")
    bidder, auction = bids["bidder"].to_numpy(), bids["auction"].to_numpy()
    assert bidder.min() >= 1000 and auction.min() >= 1000
    assert (bidder <= last_p + 10).all()  # real person ids, at most 10 ahead
    assert (auction <= last_a + 10).all()
    assert (bidder <= last_p).mean() > 0.98  # almost all already exist
    late = last_a > 1200  # "next" auctions are among the last 100 in flight
    assert (auction[late] >= last_a[late] - 100 - 100).all()
    auctions = kind(stream, "auction")
    is_auction = stream["event_type"].to_numpy() == 1
    assert (auctions["seller"].to_numpy() <= _running_last(stream, "person")[is_auction] + 10).all()
    assert set(auctions["category"].to_pylist()) == {10, 11, 12, 13, 14}


def test_hot_ratios() -> None:
    def shares(table: pa.Table) -> tuple[float, float, float]:
        is_bid = table["event_type"].to_numpy() == 2
        is_auction = table["event_type"].to_numpy() == 1
        lp_all = _running_last(table, "person")
        la = _running_last(table, "auction")[is_bid] - 1000
        lp = lp_all[is_bid] - 1000
        bids, auctions = kind(table, "bid"), kind(table, "auction")
        hot_auction = (bids["auction"].to_numpy() - 1000) == (la // 100) * 100
        hot_bidder = (bids["bidder"].to_numpy() - 1000) == (lp // 100) * 100 + 1
        hot_seller = (auctions["seller"].to_numpy() - 1000) == ((lp_all[is_auction] - 1000) // 100) * 100
        return hot_auction.mean(), hot_bidder.mean(), hot_seller.mean()

    a, b, s = shares(events(60_000))
    # A "next" choice can hit the hot id by chance (about 1 in 100-1000): allow a bit above.
    assert 0.49 < a < 0.52 and 0.745 < b < 0.77 and 0.73 < s < 0.78
    opts = {"bid.hot-ratio.auctions": "4", "bid.hot-ratio.bidders": "2", "auction.hot-ratio.sellers": "1"}
    a, b, s = shares(events(60_000, **opts))
    assert 0.74 < a < 0.77 and 0.49 < b < 0.52 and s < 0.01  # ratio 1: never hot


def test_event_time_spacing() -> None:
    for rate, expected in ((1000, lambda n: n), (10_000, lambda n: n // 10), (300, lambda n: n * 10 // 3)):
        table = events(3000, **{"first-event.rate": str(rate)})
        times = pc.coalesce(
            *(pc.struct_field(table[c].combine_chunks(), ["dateTime"]) for c in ("person", "auction", "bid"))
        )
        ms = times.cast(pa.int64()).to_numpy() - BASE_MS
        n = np.arange(1, 3001)
        assert ms.tolist() == expected(n).tolist(), rate
    auctions = kind(events(20_000, **{"first-event.rate": "1000"}), "auction")
    length = auctions["expires"].cast(pa.int64()).to_numpy() - auctions["dateTime"].cast(pa.int64()).to_numpy()
    # Mean auction length = the time of 1666 events (1.666 s at 1000 events/s).
    assert length.min() >= 1 and 1500 < length.mean() < 1830


def test_price_range_and_distribution(stream: pa.Table) -> None:
    prices = kind(stream, "bid")["price"].to_numpy()
    assert prices.min() >= 100 and prices.max() <= 100_000_000
    logs = np.log10(prices / 100.0)  # uniform over [0, 6]
    assert abs(np.median(logs) - 3) < 0.05 and (logs < 1).mean() == pytest.approx(1 / 6, abs=0.01)
    auctions = kind(stream, "auction")
    assert (auctions["reserve"].to_numpy() > auctions["initialBid"].to_numpy()).all()


def test_channels_and_urls(stream: pa.Table) -> None:
    bids = kind(stream, "bid")
    channel = bids["channel"].to_numpy(zero_copy_only=False)
    url = bids["url"].to_numpy(zero_copy_only=False)
    hot = np.isin(channel, ["Google", "Facebook", "Baidu", "Apple"])
    assert 0.47 < hot.mean() < 0.53
    assert all(re.fullmatch(r"channel-\d+", c) for c in channel[~hot][:2000])
    assert all(u.startswith("https://www.nexmark.com/") and "/item.htm?query=1" in u for u in url[:2000])
    # q21 extracts channel_id from the URL 9 times in 10 for the cached channels.
    extracted = pc.extract_regex(pa.array(url[~hot]), r"(?P<sep>&|^)channel_id=(?P<id>[^&]*)")
    found = np.asarray(extracted.is_valid())
    assert 0.87 < found.mean() < 0.93
    assert not pc.any(pc.match_substring(pa.array(url[hot]), "channel_id")).as_py()
    # A channel always has the same URL, and the id is its number bit-reversed (nexmark).
    pairs = dict(zip(channel, url, strict=True))
    assert len(pairs) == len(set(channel))
    with_id = next(c for c, u in pairs.items() if c.startswith("channel-") and "channel_id" in u)
    j = int(with_id.split("-")[1])
    rev = int(f"{j:032b}"[::-1], 2)
    rev = abs(rev - (1 << 32) if rev >= 1 << 31 else rev)
    assert pairs[with_id].endswith(f"&channel_id={rev}")


def test_person_fields(stream: pa.Table) -> None:
    persons = kind(stream, "person")
    assert all(re.fullmatch(r"\d{4} \d{4} \d{4} \d{4}", c) for c in persons["creditCard"].to_pylist())
    assert set(persons["state"].to_pylist()) == {"AZ", "CA", "ID", "OR", "WA", "WY"}
    assert len(set(persons["city"].to_pylist())) == 10
    assert all(
        re.fullmatch(r"[a-z ]*\S@[a-z ]*\S?\.com|[a-z ]+@[a-z ]*\.com", e) for e in persons["emailAddress"].to_pylist()
    )
    assert all(len(n.split(" ")) == 2 for n in persons["name"].to_pylist())


def test_extra_sizes_track_the_averages(stream: pa.Table) -> None:
    bid_extra = pc.utf8_length(kind(stream, "bid")["extra"]).to_numpy()
    # bid: 100 - 32 fixed bytes = 68 ± 20% (54 .. 81)
    assert bid_extra.min() >= 54 and bid_extra.max() <= 81 and abs(bid_extra.mean() - 67.5) < 0.5
    persons = kind(stream, "person")
    size = 8 + 19 + sum(pc.utf8_length(persons[f]).to_numpy() for f in ("name", "emailAddress", "city", "state"))
    total = size + pc.utf8_length(persons["extra"]).to_numpy()
    assert abs(total.mean() - 200) < 5
    auctions = kind(stream, "auction")
    size = 48 + sum(pc.utf8_length(auctions[f]).to_numpy() for f in ("itemName", "description"))
    assert abs((size + pc.utf8_length(auctions["extra"]).to_numpy()).mean() - 500) < 5
    bigger = pc.utf8_length(kind(events(5000, **{"bid.avg-size": "1kb"}), "bid")["extra"]).to_numpy()
    assert abs(bigger.mean() - (1024 - 32)) < 10


def test_paced_to_the_wall_clock_in_streaming_mode() -> None:
    source = make({"events.num": "300", "first-event.rate": "1000", "max-emit-speed": "false"}, mode="STREAMING")
    reader = source.create_reader("0")
    start = time.monotonic()
    got = 0
    while (b := reader.read(8192)) is not None:
        got += b.num_rows
    elapsed = time.monotonic() - start
    assert got == 300 and elapsed > 0.25  # (a loaded machine only takes longer: no upper bound)
    # Unpaced (the default) is immediate: every event in the first read.
    fast = make({"events.num": "300", "first-event.rate": "1000"}, mode="STREAMING").create_reader("0")
    assert fast.read(8192).num_rows == 300


# ---------------------------------------------------------------------- end to end


def _run(query: str, mode: str, num: int) -> list[tuple]:
    from streamsql import EnvironmentSettings, TableEnvironment

    settings = EnvironmentSettings.in_streaming_mode() if mode == "streaming" else EnvironmentSettings.in_batch_mode()
    env = TableEnvironment.create(settings)
    prefix = re.sub(
        r"WITH \((.|\n)*?\);",
        f"WITH ('connector' = 'nexmark', 'events.num' = '{num}', 'base-time' = '{BASE}');",
        (QUERIES / "prefix.sql").read_text(),
        count=1,
    )
    *setup, last = env.parse(prefix + "\n;\n" + (QUERIES / f"{query}.sql").read_text())
    for stmt in setup:
        env.execute_statement(stmt).wait()
    return [tuple(r) for r in env.execute_statement(last).collect()]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_nexmark_q0_q1_q2_end_to_end(mode: str) -> None:
    num = 5000
    bids = kind(events(num), "bid")
    q0 = _run("q0", mode, num)
    assert len(q0) == bids.num_rows
    assert sorted(r[2] for r in q0) == sorted(bids["price"].to_pylist())
    q1 = _run("q1", mode, num)
    assert len(q1) == bids.num_rows
    q2 = _run("q2", mode, num)
    want = sorted(
        (a, p) for a, p in zip(bids["auction"].to_pylist(), bids["price"].to_pylist(), strict=True) if a % 123 == 0
    )
    assert len(want) > 0 and sorted((r[0], r[1]) for r in q2) == want
