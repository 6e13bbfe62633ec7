"""The 'nexmark' connector: the Nexmark benchmark's event stream, generated in the engine.

Same option names and defaults as nexmark-flink's `'connector' = 'nexmark'`, and the same
table shape (`event_type INT, person ROW<...>, auction ROW<...>, bid ROW<...>`), so the
Nexmark DDL runs unchanged. Events are generated a chunk at a time with numpy
(`nexmark_gen.NexmarkGenerator`); an event's values depend only on the seed and its
number, so the stream is the same whatever the batch sizes, and a reader resumes exactly
from an `offset()` (events produced so far, plus the base time of the event clock).

Bounded when 'events.num' > 0 (or 'stop-at' >= 0) unless 'keep-alive' is set. In
STREAMING mode with 'max-emit-speed' = false, events are released when the wall clock
reaches their event time (relative to the first one), i.e. at the configured rate.
"""

from __future__ import annotations

import dataclasses
import math
import time
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from runtime.connectors.base import (
    ConfigOption,
    ConnectorFactory,
    Source,
    SourceContext,
    SplitReader,
    register_connector,
)
from runtime.connectors.nexmark_gen import FIELDS, NexmarkConfig, NexmarkGenerator
from runtime.errors import ConnectorError
from runtime.graph import STREAMING
from runtime.types import Field

# Set by a parallel TableSourceScan subtask (runtime.operators.source.SOURCE_PARALLELISM):
# list that many splits of interleaved generator chunks.
SOURCE_PARALLELISM = "$internal.source.parallelism"

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "first-event.rate",
        type="int",
        default="10000",
        description="Events per second of event time (all kinds together): consecutive events are "
        "1/rate seconds apart. With 'max-emit-speed' = false this is also the wall-clock rate.",
    ),
    ConfigOption(
        "next-event.rate",
        type="int",
        default="10000",
        description="Accepted for compatibility with nexmark-flink, whose generator also uses "
        "'first-event.rate' throughout.",
    ),
    ConfigOption(
        "events.num",
        type="int",
        default="0",
        description="Number of events to generate; 0 = unbounded. The source is bounded when it is positive "
        "(unless 'keep-alive' is set).",
    ),
    ConfigOption("person.proportion", type="int", default="1", description="Persons among every 'total' events."),
    ConfigOption("auction.proportion", type="int", default="3", description="Auctions among every 'total' events."),
    ConfigOption(
        "bid.proportion",
        type="int",
        default="46",
        description="Bids among every 'total' events (total = person + auction + bid proportions).",
    ),
    ConfigOption(
        "bid.hot-ratio.auctions",
        type="int",
        default="2",
        description="A bid goes to a hot auction (the first of the last 100) with probability 1 - 1/ratio.",
    ),
    ConfigOption(
        "bid.hot-ratio.bidders",
        type="int",
        default="4",
        description="A bid comes from a hot bidder (the second of the last 100 people) with probability 1 - 1/ratio.",
    ),
    ConfigOption(
        "auction.hot-ratio.sellers",
        type="int",
        default="4",
        description="An auction is opened by a hot seller (the first of the last 100 people) with "
        "probability 1 - 1/ratio.",
    ),
    ConfigOption(
        "person.avg-size",
        default="200b",
        description="Average size of a person event in bytes: the 'extra' field pads it (±20%).",
    ),
    ConfigOption(
        "auction.avg-size",
        default="500b",
        description="Average size of an auction event in bytes: the 'extra' field pads it (±20%).",
    ),
    ConfigOption(
        "bid.avg-size",
        default="100b",
        description="Average size of a bid event in bytes: the 'extra' field pads it (±20%).",
    ),
    ConfigOption(
        "max-emit-speed",
        type="boolean",
        default="true",
        description="Emit events as fast as possible. When false (STREAMING mode), events are paced to the "
        "wall clock at the event rate.",
    ),
    ConfigOption(
        "keep-alive",
        type="boolean",
        default="false",
        description="Keep the source running (idle) after the last event instead of finishing; the "
        "source is then unbounded.",
    ),
    ConfigOption(
        "stop-at",
        type="int",
        default="-1",
        description="Stop after this many events (-1 = never); like 'events.num', but meant for tests "
        "that resume a stopped job.",
    ),
    ConfigOption(
        "seed",
        type="int",
        default="0",
        description="Seed of the generator: the same seed gives the same events (not a nexmark-flink option).",
    ),
    ConfigOption(
        "base-time",
        description="Event time of the stream's start, as 'yyyy-MM-dd HH:mm:ss[.SSS]' (UTC) or epoch "
        "milliseconds. Default: the wall-clock time when the job starts, as nexmark-flink "
        "(not a nexmark-flink option).",
    ),
)
_KEYS = {o.key for o in OPTIONS} | {"connector"}
_SIZE_UNITS = {"": 1, "b": 1, "bytes": 1, "kb": 1 << 10, "k": 1 << 10, "mb": 1 << 20, "m": 1 << 20}


def _int(options: dict[str, str], key: str, default: int, minimum: int | None = None) -> int:
    text = options.get(key)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ConnectorError(f"Could not parse value '{text}' for key '{key}'.") from None
    if minimum is not None and value < minimum:
        raise ConnectorError(f"Option '{key}' must be at least {minimum}, but is {value}.")
    return value


def _bool(options: dict[str, str], key: str, default: bool) -> bool:
    text = options.get(key)
    if text is None:
        return default
    if text.strip().lower() not in ("true", "false"):
        raise ConnectorError(f"Could not parse value '{text}' for key '{key}': expected true or false.")
    return text.strip().lower() == "true"


def _size(options: dict[str, str], key: str, default: int) -> int:
    text = options.get(key)
    if text is None:
        return default
    t = text.strip().lower()
    digits = t.rstrip("abcdefghijklmnopqrstuvwxyz ").strip()
    unit = t[len(digits) :].strip()
    if not digits.isdigit() or unit not in _SIZE_UNITS:
        raise ConnectorError(f"Could not parse value '{text}' for key '{key}': expected a size such as '100b'.")
    return int(digits) * _SIZE_UNITS[unit]


def _base_time(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip()
    if t.lstrip("-").isdigit():
        return int(t)
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S"):
        try:
            dt = datetime.strptime(t, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
        return int(dt.timestamp() * 1000)
    raise ConnectorError(f"Could not parse value '{text}' for key 'base-time': expected 'yyyy-MM-dd HH:mm:ss'.")


def parse_config(options: dict[str, str], base_time_ms: int) -> NexmarkConfig:
    """The generator's parameters from the WITH options (validated)."""
    unknown = sorted(k for k in options if k not in _KEYS)
    if unknown:
        raise ConnectorError(
            f"Unsupported options found for 'nexmark': {', '.join(unknown)}. "
            f"Supported options: {', '.join(sorted(_KEYS))}."
        )
    cfg = NexmarkConfig(
        seed=_int(options, "seed", 0),
        base_time_ms=base_time_ms,
        rate=_int(options, "first-event.rate", 10_000, 1),
        person_proportion=_int(options, "person.proportion", 1, 0),
        auction_proportion=_int(options, "auction.proportion", 3, 0),
        bid_proportion=_int(options, "bid.proportion", 46, 0),
        hot_auction_ratio=_int(options, "bid.hot-ratio.auctions", 2, 1),
        hot_bidders_ratio=_int(options, "bid.hot-ratio.bidders", 4, 1),
        hot_sellers_ratio=_int(options, "auction.hot-ratio.sellers", 4, 1),
        person_avg_size=_size(options, "person.avg-size", 200),
        auction_avg_size=_size(options, "auction.avg-size", 500),
        bid_avg_size=_size(options, "bid.avg-size", 100),
    )
    _int(options, "next-event.rate", 10_000, 1)
    if cfg.total_proportion == 0:
        raise ConnectorError("The proportions of persons, auctions and bids must not all be 0.")
    return cfg


def _end(options: dict[str, str]) -> int | None:
    """Events after which the source stops (None: never)."""
    num = _int(options, "events.num", 0, 0)
    stop = _int(options, "stop-at", -1, -1)
    ends = [e for e in (num if num > 0 else None, stop if stop >= 0 else None) if e is not None]
    return min(ends) if ends else None


def is_bounded(options: dict[str, str]) -> bool:
    return _end(options) is not None and not _bool(options, "keep-alive", False)


# ---------------------------------------------------------------------- schema


def _column_plan(schema: tuple[Field, ...]) -> list[tuple[str, dict[str, str]]]:
    """For each declared column: which generated column it is, and for ROW columns the
    generated field of each declared field (names compared case-insensitively)."""
    plan: list[tuple[str, dict[str, str]]] = []
    for f in schema:
        name = f.name.lower()
        if name == "event_type":
            if not (f.type.is_integer or f.type.name in ("BIGINT", "INT")):
                raise ConnectorError(f"Column 'event_type' of a 'nexmark' table must be an integer, not {f.type}.")
            plan.append(("event_type", {}))
            continue
        if name not in FIELDS:
            raise ConnectorError(
                f"The 'nexmark' connector does not produce a column '{f.name}'; "
                "it produces event_type, person, auction and bid."
            )
        if f.type.name != "ROW":
            raise ConnectorError(f"Column '{f.name}' of a 'nexmark' table must be a ROW, not {f.type}.")
        known = {g.lower(): g for g in FIELDS[name]}
        mapping: dict[str, str] = {}
        for sub in f.type.field_names:
            if sub.lower() not in known:
                raise ConnectorError(
                    f"The 'nexmark' connector's '{name}' has no field '{sub}'; it has {', '.join(FIELDS[name])}."
                )
            mapping[sub] = known[sub.lower()]
        plan.append((name, mapping))
    return plan


def _conform(arr: pa.Array, target: pa.DataType, mapping: dict[str, str]) -> pa.Array:
    """The generated column in the declared Arrow type (names, field subset, casts)."""
    if arr.type == target:
        return arr
    if not mapping:
        return arr.cast(target)
    assert isinstance(arr, pa.StructArray)
    children = []
    for i in range(target.num_fields):
        tf = target.field(i)
        child = arr.field(mapping[tf.name])
        children.append(child if child.type == tf.type else child.cast(tf.type))
    return pa.Array.from_buffers(target, len(arr), [arr.buffers()[0]], children=children, offset=arr.offset)


# ---------------------------------------------------------------------- source


class NexmarkSource(Source):
    def __init__(
        self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
    ) -> None:
        plan = _column_plan(schema)  # validate every declared column, also unprojected ones
        idx = list(range(len(schema))) if projection is None else list(projection)
        self.produced_schema = tuple(schema[i] for i in idx)
        self.plan = [plan[i] for i in idx]
        self.options = options
        self.ctx_config = ctx.config
        fixed = _base_time(options.get("base-time"))
        self.base_time_ms = fixed if fixed is not None else int(time.time() * 1000)
        self.config = parse_config(options, self.base_time_ms)
        self.end = _end(options)
        self.keep_alive = _bool(options, "keep-alive", False)
        self.paced = ctx.mode == STREAMING and not _bool(options, "max-emit-speed", True)
        self.arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.produced_schema])
        self.kinds = frozenset(kind for kind, _ in self.plan if kind != "event_type")

    @property
    def bounded(self) -> bool:
        return self.end is not None and not self.keep_alive

    def splits(self) -> list[str]:
        n = int(self.ctx_config.get(SOURCE_PARALLELISM) or 1)
        return ["0"] if n <= 1 else [f"{k}/{n}" for k in range(n)]

    def create_reader(self, split_id: str) -> SplitReader:
        k, _, n = split_id.partition("/")
        return NexmarkReader(self, int(k), int(n or 1))

    def total_rows(self) -> int | None:
        return self.end


class NexmarkReader(SplitReader):
    """Reads split `index` of `splits`: the generator's chunks c with c % splits == index
    (all of them for one split), so parallel subtasks produce exactly the events of one
    reader, their event times advancing side by side; an event's content depends on its
    absolute number only. Position = number of events this split produced."""

    def __init__(self, source: NexmarkSource, index: int = 0, splits: int = 1) -> None:
        self.source = source
        self.index, self.splits = index, splits
        self.events = 0
        self._gen = NexmarkGenerator(source.config)
        self._chunk: tuple[int, pa.RecordBatch] | None = None
        self._wall0: float | None = None

    # ------------------------------------------------------------------ reading
    def _absolute(self, local: int) -> int:
        """The absolute event number of this split's event `local`."""
        if self.splits == 1:
            return local
        size = self._gen.cfg.chunk_size
        block, within = divmod(local, size)
        return (block * self.splits + self.index) * size + within

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        src = self.source
        end = src.end
        first = self._absolute(self.events)
        if end is not None and first >= end:
            return self._empty() if src.keep_alive else None
        size = self._gen.cfg.chunk_size
        c, pos = divmod(first, size)
        n = min(max(max_rows, 1), size - pos)
        if end is not None:
            n = min(n, end - first)
        if src.paced:
            n = min(n, self._due() - first)
            if n <= 0:
                self._sleep_until_due()
                return self._empty()
        batch = self._chunk_batch(c).slice(pos, n)
        self.events += n
        return batch

    def _chunk_batch(self, c: int) -> pa.RecordBatch:
        if self._chunk is not None and self._chunk[0] == c:
            return self._chunk[1]
        cols = self._gen.chunk(c, self.source.kinds)
        arrays = [
            _conform(cols[kind], f.type, mapping)
            for (kind, mapping), f in zip(self.source.plan, self.source.arrow_schema, strict=True)
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.source.arrow_schema)
        self._chunk = (c, batch)
        return batch

    def _empty(self) -> pa.RecordBatch:
        schema = self.source.arrow_schema
        return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in schema], schema=schema)

    # ------------------------------------------------------------------ pacing
    def _due(self) -> int:
        """Events whose event time the wall clock has reached (the first one is due at once)."""
        now = time.monotonic()
        if self._wall0 is None:
            done = self._absolute(self.events)
            self._wall0 = now - self._gen.time_offset_ms(done - 1) / 1000.0 if done else now
        elapsed_ms = math.floor((now - self._wall0) * 1000.0)
        return max(math.ceil((elapsed_ms + 1) * 1000.0 / self._gen.cfg.inter_event_delay_us) - 1, 0)

    def _sleep_until_due(self) -> None:
        assert self._wall0 is not None
        due_at = self._wall0 + self._gen.time_offset_ms(self._absolute(self.events)) / 1000.0
        time.sleep(min(max(due_at - time.monotonic(), 0.0), 0.05))

    # ------------------------------------------------------------------ offsets
    def offset(self) -> Any:
        return {"events": self.events, "base_time": self.source.config.base_time_ms}

    def seek(self, offset: Any) -> None:
        if isinstance(offset, dict):
            events = int(offset.get("events", 0))
            base = offset.get("base_time")
        else:
            events, base = int(offset or 0), None
        if base is not None and int(base) != self._gen.cfg.base_time_ms:
            self._gen = NexmarkGenerator(dataclasses.replace(self._gen.cfg, base_time_ms=int(base)))
            self._chunk = None
        self.events = events
        self._wall0 = None


FACTORY = register_connector(
    ConnectorFactory(
        name="nexmark",
        description=(
            "Generates the Nexmark benchmark's events (persons, auctions, bids) in the engine, with "
            "nexmark-flink's options and table shape: `event_type INT, person ROW<...>, auction ROW<...>, "
            "bid ROW<...>` (see benchmarks/nexmark/prefix.sql for the full DDL; a table may declare a subset "
            "of the columns and ROW fields). Deterministic for a given 'seed'."
        ),
        options=OPTIONS,
        create_source=NexmarkSource,
        is_bounded=is_bounded,
    )
)
