"""PyFlink's small API values: ExplainDetail, SqlDialect, ChangelogMode, Module, ModuleEntry."""

from __future__ import annotations

from enum import Enum
from typing import Any

from runtime.row import RowKind


class ExplainDetail(Enum):
    """Extra detail `explain(...)` / `explain_sql(...)` can print."""

    ESTIMATED_COST = 0
    CHANGELOG_MODE = 1
    JSON_EXECUTION_PLAN = 2
    PLAN_ADVICE = 3


class SqlDialect(Enum):
    """`table.sql-dialect`: only Flink's DEFAULT dialect is implemented (HIVE needs Hive's
    parser and metastore, a JVM)."""

    DEFAULT = 0
    HIVE = 1


class ChangelogMode:
    """The kinds of rows a changelog may contain (insert-only, upsert, all)."""

    def __init__(self, j_changelog_mode: frozenset[RowKind]) -> None:
        self._kinds = frozenset(j_changelog_mode)

    @staticmethod
    def insert_only() -> ChangelogMode:
        return ChangelogMode(frozenset({RowKind.INSERT}))

    @staticmethod
    def upsert() -> ChangelogMode:
        return ChangelogMode(frozenset({RowKind.INSERT, RowKind.UPDATE_AFTER, RowKind.DELETE}))

    @staticmethod
    def all() -> ChangelogMode:
        return ChangelogMode(frozenset(RowKind))

    def contains(self, kind: RowKind) -> bool:
        return kind in self._kinds

    def contains_only(self, kind: RowKind) -> bool:
        return self._kinds == {kind}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ChangelogMode) and other._kinds == self._kinds

    def __hash__(self) -> int:
        return hash(self._kinds)

    def __repr__(self) -> str:
        # Flink's text: [INSERT, UPDATE_AFTER, DELETE]
        return "[" + ", ".join(k.name for k in sorted(self._kinds, key=lambda k: k.value)) + "]"


class Module:
    """A module of functions for `load_module(name, module)`: streamsql has its built-in
    `core` module; a module is named by `load_module`'s first argument."""

    def __init__(self, j_module: Any = None) -> None:
        self._options = j_module if isinstance(j_module, dict) else {}


class ModuleEntry:
    """A loaded module and whether it is in use (`list_full_modules()`)."""

    def __init__(self, name: str, used: bool, j_module_entry: Any = None) -> None:
        self._name = name
        self._used = used

    def name(self) -> str:
        return self._name

    def used(self) -> bool:
        return self._used

    def __repr__(self) -> str:
        return f"ModuleEntry{{name='{self._name}', used={str(self._used).lower()}}}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModuleEntry) and (other._name, other._used) == (self._name, self._used)

    def __hash__(self) -> int:
        return hash((self._name, self._used))
