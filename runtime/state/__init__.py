"""Keyed state: the KeyedStateBackend interface and its in-memory `hashmap` implementation.

Keys arrive as arrays (one per key column, one row per record), never as a "current
key": an operator asks for the slots of a whole batch at once and keeps its per-key
values in columnar arrays indexed by slot. Every key also belongs to a key group
(`pipeline.max-parallelism`, default 128) so state can be re-split across subtasks.
"""

from runtime.state.backend import DEFAULT_MAX_PARALLELISM, KeyedStateBackend, encode_rows
from runtime.state.factory import create_backend
from runtime.state.hashmap import HashMapStateBackend
from runtime.state.keygroups import key_group_range, key_groups_of_rows, subtask_of_key_groups

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
