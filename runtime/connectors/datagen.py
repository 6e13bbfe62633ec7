"""The 'datagen' connector: random or sequential rows, Flink's option names.

Values are generated with numpy a chunk at a time. Row `i` of a split always gets the same
values: chunk `i // CHUNK` of each field draws from its own seeded generator, so a reader
that seeks to an offset (= rows produced) resumes with exactly the rows it would have
produced. Random strings are hex digits, as Flink's `nextHexString`. Timestamps are
"now" (fixed when the source is created) minus a random amount up to 'max-past'.

Bounded when 'number-of-rows' is set or a field is a sequence (the shortest sequence
ends it); 'rows-per-second' throttles only in STREAMING mode.
"""

from __future__ import annotations

import time
import zlib
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.base import (
    SCAN_PARALLELISM,
    ConfigOption,
    ConnectorFactory,
    Source,
    SourceContext,
    SplitReader,
    parse_duration_ms,
    register_connector,
)
from runtime.errors import ConnectorError
from runtime.graph import STREAMING
from runtime.map_values import map_array
from runtime.types import DataType, Field

CHUNK = 1 << 16
# Set by a parallel TableSourceScan subtask (runtime.operators.source.SOURCE_PARALLELISM):
# list that many splits of interleaved CHUNK-row blocks.
SOURCE_PARALLELISM = "$internal.source.parallelism"
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)

OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "rows-per-second",
        type="int",
        default="10000",
        description="Rows generated per second (STREAMING mode only; BATCH generates as fast as possible).",
    ),
    ConfigOption("number-of-rows", type="int", description="Total number of rows; the source is bounded when set."),
    ConfigOption(
        "fields.#.kind",
        type="enum",
        default="random",
        values=("random", "sequence"),
        description="Generator of the field: 'random' values or a 'sequence' from start to end.",
    ),
    ConfigOption("fields.#.min", description="Smallest random value (numeric types)."),
    ConfigOption("fields.#.max", description="Largest random value (numeric types)."),
    ConfigOption(
        "fields.#.max-past",
        type="duration",
        default="0",
        description="Random TIMESTAMP/DATE values lie up to this far before the source's start time.",
    ),
    ConfigOption(
        "fields.#.length",
        type="int",
        default="100",
        description="Length of random strings/bytes, and number of elements of ARRAY/MAP values (default 3 for those).",
    ),
    ConfigOption(
        "fields.#.var-len",
        type="boolean",
        default="false",
        description="Random strings/bytes get a random length between 1 and 'length'.",
    ),
    ConfigOption("fields.#.start", description="First value of a sequence."),
    ConfigOption("fields.#.end", description="Last value of a sequence (inclusive)."),
    ConfigOption("fields.#.null-rate", default="0.0", description="Fraction of NULL values (0.0 to 1.0)."),
)

_INT_RANGE = {
    "TINYINT": (-(2**7), 2**7 - 1),
    "SMALLINT": (-(2**15), 2**15 - 1),
    "INT": (-(2**31), 2**31 - 1),
    "BIGINT": (-(2**63), 2**63 - 1),
    "INTERVAL_YEAR_MONTH": (-(2**31), 2**31 - 1),
}
_SEQUENCE_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INT",
    "BIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
    "CHAR",
    "VARCHAR",
    "BINARY",
    "VARBINARY",
)


def _num(text: str | None, key: str, cast: type = float) -> Any:
    if text is None:
        return None
    try:
        return cast(text) if cast is not int else int(Decimal(text))
    except Exception:
        raise ConnectorError(f"Could not parse value '{text}' for option '{key}'.") from None


class FieldGen:
    """Generates one field's values for a range of rows, deterministically."""

    def __init__(self, path: str, dtype: DataType, options: dict[str, str], seed: int, now_ms: int) -> None:
        self.path = path
        self.dtype = dtype
        self.options = options
        self.seed = seed
        self.now_ms = now_ms
        p = f"fields.{path}."
        self.kind = options.get(p + "kind", "random").lower()
        if self.kind not in ("random", "sequence"):
            raise ConnectorError(f"Unsupported kind '{self.kind}' for option '{p}kind'; use 'random' or 'sequence'.")
        self.null_rate = _num(options.get(p + "null-rate", "0"), p + "null-rate")
        self.min = options.get(p + "min")
        self.max = options.get(p + "max")
        default_len = 3 if dtype.name in ("ARRAY", "MULTISET", "MAP") else 100
        self.length = _num(options.get(p + "length", str(default_len)), p + "length", int)
        if dtype.name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY") and dtype.precision and p + "length" not in options:
            self.length = min(self.length, dtype.precision)
        self.var_len = options.get(p + "var-len", "false").lower() == "true"
        self.max_past = parse_duration_ms(options[p + "max-past"], p + "max-past") if p + "max-past" in options else 0
        self.count: int | None = None
        if self.kind == "sequence":
            if dtype.name not in _SEQUENCE_TYPES:
                raise ConnectorError(f"Sequence generators are not supported for type {dtype} (field '{path}').")
            if p + "start" not in options or p + "end" not in options:
                raise ConnectorError(
                    f"Could not find required property '{p}start' and '{p}end' for sequence generator."
                )
            self.start = _num(options[p + "start"], p + "start", int)
            self.end = _num(options[p + "end"], p + "end", int)
            if self.end < self.start:
                raise ConnectorError(f"'{p}end' must not be smaller than '{p}start'.")
            self.count = self.end - self.start + 1
        self._cache: tuple[int, pa.Array] | None = None
        self.children: list[FieldGen] = []
        if dtype.name in ("ARRAY", "MULTISET"):
            self.children = [FieldGen(path + ".element", dtype.children[0], options, seed * 31 + 1, now_ms)]
        elif dtype.name == "MAP":
            self.children = [
                FieldGen(path + ".key", dtype.children[0], options, seed * 31 + 1, now_ms),
                FieldGen(path + ".value", dtype.children[1], options, seed * 31 + 2, now_ms),
            ]
        elif dtype.name == "ROW":
            self.children = [
                FieldGen(f"{path}.{fn}", ft, options, seed * 31 + 3 + i, now_ms)
                for i, (fn, ft) in enumerate(zip(dtype.field_names, dtype.children, strict=True))
            ]

    # ------------------------------------------------------------------ public
    def values(self, start: int, stop: int) -> pa.Array:
        """Values of rows [start, stop)."""
        if self.kind == "sequence":
            return self._sequence(start, stop)
        parts = []
        pos = start
        while pos < stop:
            k = pos // CHUNK
            chunk = self._chunk(k)
            lo = pos - k * CHUNK
            hi = min(stop - k * CHUNK, CHUNK)
            parts.append(chunk.slice(lo, hi - lo))
            pos = k * CHUNK + hi
        if not parts:
            return pa.array([], self.dtype.to_arrow())
        return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)

    def _chunk(self, k: int) -> pa.Array:
        if self._cache is not None and self._cache[0] == k:
            return self._cache[1]
        rng = np.random.default_rng([self.seed & 0xFFFFFFFF, k])
        arr = self._random(rng, CHUNK)
        if self.null_rate and self.null_rate > 0:
            mask = rng.random(CHUNK) < self.null_rate
            arr = pc.if_else(pa.array(mask), pa.nulls(CHUNK, arr.type), arr)
        self._cache = (k, arr)
        return arr

    # ------------------------------------------------------------------ sequence
    def _sequence(self, start: int, stop: int) -> pa.Array:
        t = self.dtype
        idx = np.arange(start, stop, dtype=np.int64)
        if t.name in _INT_RANGE:
            return pa.array(self.start + idx, pa.int64()).cast(t.to_arrow())
        if t.name in ("FLOAT", "DOUBLE"):
            return pa.array((self.start + idx).astype(np.float64)).cast(t.to_arrow())
        if t.name == "DECIMAL":
            return pa.array(self.start + idx, pa.int64()).cast(pa.decimal128(38, 0)).cast(t.to_arrow())
        if t.name in ("BINARY", "VARBINARY"):  # the value's 8 big-endian bytes, as Flink's Longs.toByteArray
            raw = pa.py_buffer((self.start + idx).astype(">i8").tobytes())
            eight = pa.FixedSizeBinaryArray.from_buffers(pa.binary(8), len(idx), [None, raw])
            return eight.cast(pa.binary()).cast(t.to_arrow())
        return pc.cast(pa.array(self.start + idx, pa.int64()), pa.string())

    # ------------------------------------------------------------------ random
    def _bounds(self, lo: float, hi: float) -> tuple[float, float]:
        p = f"fields.{self.path}."
        mn = _num(self.min, p + "min") if self.min is not None else lo
        mx = _num(self.max, p + "max") if self.max is not None else hi
        if mn > mx:
            raise ConnectorError(f"'{p}min' must not be larger than '{p}max'.")
        return mn, mx

    def _random(self, rng: np.random.Generator, n: int) -> pa.Array:
        t = self.dtype
        name = t.name
        if name in _INT_RANGE:
            lo, hi = _INT_RANGE[name]
            p = f"fields.{self.path}."
            mn = _num(self.min, p + "min", int) if self.min is not None else lo
            mx = _num(self.max, p + "max", int) if self.max is not None else hi
            if mn > mx:
                raise ConnectorError(f"'{p}min' must not be larger than '{p}max'.")
            return pa.array(rng.integers(mn, mx, size=n, endpoint=True, dtype=np.int64)).cast(t.to_arrow())
        if name in ("FLOAT", "DOUBLE"):
            big = float(np.finfo(np.float32 if name == "FLOAT" else np.float64).max)
            mn, mx = self._bounds(-big, big)
            u = rng.random(n)
            vals = mn * (1.0 - u) + mx * u
            return pa.array(vals).cast(t.to_arrow())
        if name == "DECIMAL":
            prec, scale = t.precision or 10, t.scale or 0
            top = min(10.0 ** (prec - scale) - 10.0**-scale, 9e18 / 10**scale)
            mn, mx = self._bounds(-top, top)
            u = rng.random(n)
            unscaled = np.clip(np.round((mn * (1.0 - u) + mx * u) * 10**scale), -9e18, 9e18).astype(np.int64)
            pairs = np.empty((n, 2), dtype=np.int64)
            pairs[:, 0] = unscaled
            pairs[:, 1] = np.where(unscaled < 0, -1, 0)
            if prec <= 38:
                return pa.Array.from_buffers(pa.decimal128(prec, scale), n, [None, pa.py_buffer(pairs.tobytes())])
            return pa.Array.from_buffers(pa.decimal128(38, scale), n, [None, pa.py_buffer(pairs.tobytes())]).cast(
                t.to_arrow()
            )
        if name == "BOOLEAN":
            return pa.array(rng.integers(0, 2, size=n).astype(bool))
        if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            return self._random_text(rng, n, binary=name in ("BINARY", "VARBINARY"))
        if name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            past = rng.integers(0, self.max_past, size=n, endpoint=True) if self.max_past else np.zeros(n, np.int64)
            ms = self.now_ms - past
            per_ms = {"ms": 1, "us": 1000, "ns": 1_000_000}[t.to_arrow().unit]
            return pa.array(ms * per_ms, pa.int64()).cast(t.to_arrow())
        if name == "DATE":
            past = rng.integers(0, self.max_past, size=n, endpoint=True) if self.max_past else np.zeros(n, np.int64)
            return pa.array(((self.now_ms - past) // 86_400_000).astype(np.int32), pa.date32())
        if name == "TIME":
            return pa.array(rng.integers(0, 86_400_000, size=n).astype(np.int32), pa.time32("ms"))
        if name == "INTERVAL_DAY_TIME":
            return pa.array(rng.integers(0, 86_400_000, size=n), pa.int64()).cast(pa.duration("ms"))
        if name in ("ARRAY", "MULTISET"):
            elems = self.children[0]._random(rng, n * self.length)
            offsets = pa.array(np.arange(0, n * self.length + 1, self.length, dtype=np.int32))
            return pa.ListArray.from_arrays(offsets, elems, type=t.to_arrow())
        if name == "MAP":
            keys = self.children[0]._random(rng, n * self.length)
            vals = self.children[1]._random(rng, n * self.length)
            offsets = pa.array(np.arange(0, n * self.length + 1, self.length, dtype=np.int32))
            return map_array(offsets, keys, vals, t.to_arrow())
        if name == "ROW":
            children = [c._random(rng, n) for c in self.children]
            fields = [
                pa.field(fn, ft.to_arrow(), ft.nullable) for fn, ft in zip(t.field_names, t.children, strict=True)
            ]
            return pa.StructArray.from_arrays(children, fields=fields)
        raise ConnectorError(f"The 'datagen' connector does not support the type {t} (field '{self.path}').")

    def _random_text(self, rng: np.random.Generator, n: int, binary: bool) -> pa.Array:
        length = max(self.length, 0)
        lens = rng.integers(1, length, size=n, endpoint=True) if self.var_len and length > 0 else np.full(n, length)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        total = int(offsets[-1])
        if binary:
            data = rng.integers(0, 256, size=total, dtype=np.uint8)
            return pa.Array.from_buffers(
                pa.large_binary(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())]
            ).cast(pa.binary())
        data = _HEX[rng.integers(0, 16, size=total, dtype=np.uint8)]
        arr = pa.Array.from_buffers(
            pa.large_string(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())]
        )
        return arr.cast(pa.string())


class DatagenReader(SplitReader):
    """Reads split `k` of `n` ("k/n", or "0" for the whole sequence): the blocks of CHUNK
    rows whose number is k modulo n, so parallel subtasks together produce exactly the rows
    of one reader and their sequences (and event times) advance side by side. Values
    depend on the global row number only, so a row is the same whatever the parallelism.
    Position (`rows`) counts this split's rows."""

    def __init__(self, source: DatagenSource, split: str) -> None:
        self.source = source
        k, _, n = split.partition("/")
        self.index, self.splits = int(k), int(n or 1)
        self.gens = [
            FieldGen(f.name, f.type, source.options, zlib.crc32(f"0:{f.name}".encode()), source.now_ms)
            for f in source.produced_schema
        ]
        self.schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in source.produced_schema])
        self.rows = 0
        self._t0: float | None = None
        self._base = 0

    def _global(self, local: int) -> int:
        """The global row number of this split's row `local`."""
        if self.splits == 1:
            return local
        block, within = divmod(local, CHUNK)
        return (block * self.splits + self.index) * CHUNK + within

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        limit = self.source.limit
        start = self._global(self.rows)
        if limit is not None and start >= limit:
            return None
        n = max_rows if limit is None else min(max_rows, limit - start)
        if self.splits > 1:
            n = min(n, CHUNK - self.rows % CHUNK)
        if self.source.throttled:
            n = self._allowed(n)
            if n == 0:
                return pa.RecordBatch.from_arrays([pa.array([], f.type) for f in self.schema], schema=self.schema)
        arrays = [g.values(start, start + n) for g in self.gens]
        self.rows += n
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _allowed(self, n: int) -> int:
        now = time.monotonic()
        if self._t0 is None:
            self._t0, self._base = now, self.rows
        rps = max(1, self.source.rows_per_second // self.splits)  # the rate is the whole source's
        budget = int((now - self._t0) * rps) - (self.rows - self._base) + 1
        if budget <= 0:
            time.sleep(min(0.05, -budget / rps + 1.0 / rps))
            budget = int((time.monotonic() - self._t0) * rps) - (self.rows - self._base) + 1
        return max(0, min(n, budget))

    def offset(self) -> Any:
        return {"rows": self.rows}

    def seek(self, offset: Any) -> None:
        self.rows = int(offset["rows"]) if isinstance(offset, dict) else int(offset or 0)
        self._t0 = None


class DatagenSource(Source):
    def __init__(
        self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None, ctx: SourceContext
    ) -> None:
        self.options = options
        self.ctx = ctx
        fields = [schema[i] for i in (range(len(schema)) if projection is None else projection)]
        self.produced_schema = tuple(fields)
        self.rows_per_second = _num(options.get("rows-per-second", "10000"), "rows-per-second", int)
        if self.rows_per_second <= 0:
            raise ConnectorError("'rows-per-second' must be positive.")
        self.now_ms = int(time.time() * 1000)
        # Validate every declared field (also unprojected ones) and find the bound.
        limit = _num(options.get("number-of-rows"), "number-of-rows", int)
        for f in schema:
            gen = FieldGen(f.name, f.type, options, 0, self.now_ms)
            if gen.count is not None:
                limit = gen.count if limit is None else min(limit, gen.count)
        self.limit: int | None = limit
        self.throttled = ctx.mode == STREAMING

    @property
    def bounded(self) -> bool:
        return self.limit is not None

    def splits(self) -> list[str]:
        n = int(self.ctx.config.get(SOURCE_PARALLELISM) or 1)
        return ["0"] if n <= 1 else [f"{k}/{n}" for k in range(n)]

    def create_reader(self, split_id: str) -> SplitReader:
        return DatagenReader(self, split_id)

    def total_rows(self) -> int | None:
        return self.limit


def is_bounded(options: dict[str, str]) -> bool:
    if options.get("number-of-rows"):
        return True
    return any(k.startswith("fields.") and k.endswith(".kind") and v.lower() == "sequence" for k, v in options.items())


FACTORY = register_connector(
    ConnectorFactory(
        name="datagen",
        description="Generates random or sequential rows (for testing and benchmarks).",
        options=(*OPTIONS, SCAN_PARALLELISM),
        create_source=DatagenSource,
        is_bounded=is_bounded,
    )
)
