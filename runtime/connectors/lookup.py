"""Lookup sources (for processing-time `FOR SYSTEM_TIME AS OF` lookup joins) and Flink's
lookup cache.

A connector is a lookup source when its factory declares `create_lookup` and its
`lookup_when(options)` holds (`supports_lookup`): 'duckdb' and 'jdbc' always; 'filesystem'
only when the table sets a `lookup.*` option (an opt-in: Flink's filesystem connector is no
lookup source, and a plain filesystem table keeps being refused as in Flink, case 913).

`open_lookup(connector, options, schema, config)` returns a `LookupSource` whose
`lookup(key_columns, keys)` returns every row of the table whose columns `key_columns`
equal one of the `keys` rows. `LookupCache` implements Flink's options:

- `lookup.cache` = NONE (default) | PARTIAL
- `lookup.partial-cache.max-rows`: keys kept (least recently used evicted first),
- `lookup.partial-cache.expire-after-write` / `expire-after-access`: durations,
- `lookup.partial-cache.cache-missing-key` (default true): remember keys without rows.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import pyarrow as pa

from runtime.connectors.base import ConfigOption, get_connector, parse_duration_ms
from runtime.errors import ConnectorError
from runtime.types import Field

LOOKUP_OPTIONS: tuple[ConfigOption[Any], ...] = (
    ConfigOption(
        "lookup.cache",
        type="enum",
        default="NONE",
        values=("NONE", "PARTIAL"),
        description="Cache of looked-up rows: NONE (every lookup reads the table) or PARTIAL (rows of recently looked-up keys).",
    ),
    ConfigOption(
        "lookup.partial-cache.max-rows",
        type="int",
        description="PARTIAL cache: the most keys kept; the least recently used are evicted.",
    ),
    ConfigOption(
        "lookup.partial-cache.expire-after-write",
        type="duration",
        description="PARTIAL cache: an entry expires this long after it was loaded.",
    ),
    ConfigOption(
        "lookup.partial-cache.expire-after-access",
        type="duration",
        description="PARTIAL cache: an entry expires this long after it was last used.",
    ),
    ConfigOption(
        "lookup.partial-cache.cache-missing-key",
        type="boolean",
        default="true",
        description="PARTIAL cache: also remember keys that have no row in the table.",
    ),
    ConfigOption("lookup.max-retries", type="int", default="3", description="Retries of a failed lookup query."),
    # Flink's legacy names (deprecated there, still read): both set and positive enable the cache
    ConfigOption(
        "lookup.cache.max-rows",
        type="int",
        description="Deprecated (use 'lookup.cache' = 'PARTIAL' and 'lookup.partial-cache.max-rows'): with "
        "'lookup.cache.ttl', a positive value enables a cache of this many keys.",
    ),
    ConfigOption(
        "lookup.cache.ttl",
        type="duration",
        default="10 s",
        description="Deprecated (use 'lookup.partial-cache.expire-after-write'): how long a legacy cache entry "
        "lives after it was loaded.",
    ),
    ConfigOption(
        "lookup.cache.caching-missing-key",
        type="boolean",
        default="true",
        description="Deprecated (use 'lookup.partial-cache.cache-missing-key'): whether the legacy cache also "
        "remembers keys without rows.",
    ),
)


def supports_lookup(connector: str, options: dict[str, str]) -> bool:
    """Whether the connector builds a lookup source for a table with these options (its
    factory's `create_lookup` and `lookup_when`)."""
    try:
        factory = get_connector(connector)
    except ConnectorError:
        return False
    return factory.create_lookup is not None and factory.lookup_when(options)


class LookupSource:
    """Rows of a table by key."""

    def lookup(self, key_columns: list[int], keys: pa.Table) -> pa.Table:
        raise NotImplementedError

    def close(self) -> None:
        pass


def semi_join(table: pa.Table, key_columns: list[int], keys: pa.Table) -> pa.Table:
    """Rows of `table` whose `key_columns` equal a row of `keys` (NULLs never match)."""
    if table.num_rows == 0 or keys.num_rows == 0:
        return table.slice(0, 0)
    names = [f"k{i}" for i in range(len(key_columns))]
    left_cols: dict[str, Any] = {}
    for n, c in zip(names, key_columns, strict=True):
        left_cols[n] = table.column(c)
    left_cols["__row"] = pa.array(range(table.num_rows), type=pa.int64())
    right = pa.table(
        {
            n: keys.column(i).cast(table.schema.field(c).type)
            for i, (n, c) in enumerate(zip(names, key_columns, strict=True))
        }
    )
    hit = pa.table(left_cols).join(right, keys=names, join_type="left semi", use_threads=False)
    rows = sorted(hit.column("__row").to_pylist())
    return table.take(pa.array(rows, type=pa.int64()))


def open_lookup(
    connector: str, options: dict[str, str], schema: tuple[Field, ...], config: dict[str, str]
) -> LookupSource:
    """The lookup source of a table, built by its connector's `create_lookup`."""
    try:
        create = get_connector(connector).create_lookup
    except ConnectorError:
        create = None
    if create is None:
        raise ConnectorError(f"Connector '{connector}' is not a lookup source")
    source: LookupSource = create(options, schema, config)
    return source


def _duration_ms(text: str | None, key: str) -> int | None:
    return None if text is None else parse_duration_ms(text, key)


class LookupCache:
    """Flink's PARTIAL lookup cache: key tuple → rows of that key, with write/access
    expiry and an LRU bound on the number of keys. `clock` (seconds) is injectable for
    tests."""

    def __init__(self, options: dict[str, str], clock: Any = time.monotonic) -> None:
        mode = options.get("lookup.cache", "NONE").upper()
        if mode not in ("NONE", "PARTIAL"):
            raise ConnectorError(f"Unsupported lookup.cache '{mode}': NONE or PARTIAL")
        self.enabled = mode == "PARTIAL"
        rows = options.get("lookup.partial-cache.max-rows")
        self.max_rows = int(rows) if rows else None
        self.expire_write = _duration_ms(
            options.get("lookup.partial-cache.expire-after-write"), "lookup.partial-cache.expire-after-write"
        )
        self.expire_access = _duration_ms(
            options.get("lookup.partial-cache.expire-after-access"), "lookup.partial-cache.expire-after-access"
        )
        self.cache_missing = options.get("lookup.partial-cache.cache-missing-key", "true").lower() != "false"
        if not self.enabled:
            # Flink's legacy options: a cache when 'lookup.cache.max-rows' and 'lookup.cache.ttl' are positive
            legacy_rows = int(options.get("lookup.cache.max-rows") or -1)
            ttl = _duration_ms(options.get("lookup.cache.ttl") or "10 s", "lookup.cache.ttl") or 0
            if legacy_rows > 0 and ttl > 0:
                self.enabled = True
                self.max_rows, self.expire_write, self.expire_access = legacy_rows, ttl, None
                self.cache_missing = options.get("lookup.cache.caching-missing-key", "true").lower() != "false"
        self.clock = clock
        self.entries: OrderedDict[tuple[Any, ...], tuple[pa.Table, float, float]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> pa.Table | None:
        if not self.enabled:
            return None
        entry = self.entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        rows, written, accessed = entry
        now = self.clock() * 1000
        if (self.expire_write is not None and now - written >= self.expire_write) or (
            self.expire_access is not None and now - accessed >= self.expire_access
        ):
            del self.entries[key]
            self.misses += 1
            return None
        self.entries[key] = (rows, written, now)
        self.entries.move_to_end(key)
        self.hits += 1
        return rows

    def put(self, key: tuple[Any, ...], rows: pa.Table) -> None:
        if not self.enabled or (rows.num_rows == 0 and not self.cache_missing):
            return
        now = self.clock() * 1000
        self.entries[key] = (rows, now, now)
        self.entries.move_to_end(key)
        if self.max_rows is not None:
            while len(self.entries) > self.max_rows:
                self.entries.popitem(last=False)
