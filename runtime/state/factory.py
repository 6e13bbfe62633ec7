"""`create_backend`: the keyed state backend named by `state.backend.type`."""

from __future__ import annotations

from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.rocksdb import RocksDBStateBackend


def create_backend(config: dict[str, str] | None = None) -> KeyedStateBackend:
    """The backend named by `state.backend.type`: `hashmap` (default) or `rocksdb`."""
    config = config or {}
    max_par = int(config.get("pipeline.max-parallelism", DEFAULT_MAX_PARALLELISM) or DEFAULT_MAX_PARALLELISM)
    kind = config.get("state.backend.type", "hashmap").lower()
    if kind == "rocksdb":
        return RocksDBStateBackend(max_parallelism=max_par, config=config)
    if kind not in ("hashmap", "memory", "heap"):
        raise ValueError(f"Unknown 'state.backend.type' = '{kind}': use hashmap or rocksdb.")
    return HashMapStateBackend(max_parallelism=max_par)
