"""`create_backend`: the keyed state backend named by `state.backend.type`."""

from __future__ import annotations

from runtime.config.core import MAX_PARALLELISM
from runtime.state.backend import KeyedStateBackend
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.options import backend_kind
from runtime.state.rocksdb import RocksDBStateBackend


def create_backend(config: dict[str, str] | None = None) -> KeyedStateBackend:
    """The backend named by `state.backend.type`: `hashmap` (default) or `rocksdb`."""
    max_par = MAX_PARALLELISM.get(config)
    if backend_kind(config) == "rocksdb":
        return RocksDBStateBackend(max_parallelism=max_par, config=config or {})
    return HashMapStateBackend(max_parallelism=max_par)
