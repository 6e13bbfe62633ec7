"""State backend options (read by runtime/state/backend.py, rocksdb.py and the
checkpointing of a rocksdb backend)."""

from __future__ import annotations

from runtime.config.options import key

# Flink's older names for the heap backend read as `hashmap`.
BACKEND_ALIASES = {"memory": "hashmap", "heap": "hashmap", "filesystem": "hashmap"}

STATE_BACKEND = (
    key("state.backend.type")
    .enum_type("hashmap", "rocksdb", *BACKEND_ALIASES)
    .default_value("hashmap")
    .with_deprecated_keys("state.backend")
    .with_description(
        "Keyed state backend: hashmap (in memory) or rocksdb (the key index on local disk, laid out by key "
        "group). With the Spark runner, `rocksdb` selects Spark's RocksDB state store provider."
    )
)

ROCKSDB_LOCAL_DIR = (
    key("state.backend.rocksdb.localdir")
    .string_type()
    .no_default_value()
    .with_description("Directory for rocksdb working databases (default: the temp dir).")
)


def backend_kind(config: dict[str, str] | None) -> str:
    """`hashmap` or `rocksdb` (aliases resolved)."""
    kind = STATE_BACKEND.get(config)
    return BACKEND_ALIASES.get(kind, kind)
