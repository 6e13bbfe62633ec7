"""Keyed state: the KeyedStateBackend interface and its in-memory `hashmap` implementation.

Keys arrive as arrays (one per key column, one row per record), never as a "current
key": an operator asks for the slots of a whole batch at once and keeps its per-key
values in columnar arrays indexed by slot. Every key also belongs to a key group
(`pipeline.max-parallelism`, default 128) so state can be re-split across subtasks.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend, encode_rows
    from runtime.state.factory import create_backend
    from runtime.state.hashmap import HashMapStateBackend
    from runtime.state.keygroups import key_group_range, key_groups_of_rows, subtask_of_key_groups

# Names re-exported lazily (as runtime.checkpoint does): start-up imports
# `runtime.state.ttl` (the `table.exec.state.ttl` option) and the operator base class names
# `KeyedStateBackend`; executing this package eagerly would load every backend (RocksDB's
# slot values included) for a job that keeps no state.
_EXPORTS = {
    "DEFAULT_MAX_PARALLELISM": "runtime.state.backend",
    "KeyedStateBackend": "runtime.state.backend",
    "encode_rows": "runtime.state.backend",
    "create_backend": "runtime.state.factory",
    "HashMapStateBackend": "runtime.state.hashmap",
    "key_group_range": "runtime.state.keygroups",
    "key_groups_of_rows": "runtime.state.keygroups",
    "subtask_of_key_groups": "runtime.state.keygroups",
}

__all__ = [
    "DEFAULT_MAX_PARALLELISM",
    "HashMapStateBackend",
    "KeyedStateBackend",
    "create_backend",
    "encode_rows",
    "key_group_range",
    "key_groups_of_rows",
    "subtask_of_key_groups",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'runtime.state' has no attribute {name!r}")
