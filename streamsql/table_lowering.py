"""Table API → Flink SQL: the query a Table stands for, built one operation at a time.

A Table keeps a `SelectSpec`, the parts of one SELECT block. An operation adds to the
current block when SQL allows it without changing the meaning (a `where` on `SELECT *`,
a `select` after `where`, `group_by(...).select(...)` on a plain scan, `order_by` then
`fetch`), and otherwise starts a new block over the current one as a subquery. So
`t.where(p).select(a, b)` is exactly `SELECT a, b FROM t WHERE p`, and EXPLAIN shows the
plan of the equivalent SQL; nested blocks plan the same after the optimizer merges
projections.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from runtime.frozen import frozen_dataclass
from streamsql.expressions import Expression, RenderCtx, quote

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment

_aliases = itertools.count(1)


def fresh_alias() -> str:
    """A subquery alias (the names never show in results or plans)."""
    return f"_t{next(_aliases)}"


@frozen_dataclass
class SelectSpec:
    """One SELECT block, or a complete query text (`raw`: set operations, sql_query)."""

    from_: str = ""
    from_is_name: bool = False  # from_ is a plain table name (no join, no subquery)
    select: tuple[str, ...] | None = None  # None: *
    where: str | None = None
    group_by: tuple[str, ...] | None = None
    distinct: bool = False
    order_by: tuple[str, ...] = ()
    offset: int | None = None
    fetch: int | None = None
    raw: str | None = None

    @staticmethod
    def scan(name: str) -> SelectSpec:
        return SelectSpec(from_=quote(name), from_is_name=True)

    @staticmethod
    def of_query(sql: str) -> SelectSpec:
        return SelectSpec(raw=sql)

    # ------------------------------------------------------------------ shape
    @property
    def projection_free(self) -> bool:
        """SELECT * [WHERE]: a projection, grouping or distinct may still be added."""
        return (
            self.raw is None
            and self.select is None
            and self.group_by is None
            and not self.distinct
            and not self.order_by
            and self.offset is None
            and self.fetch is None
        )

    @property
    def sortable(self) -> bool:
        """ORDER BY may be added (a plain block without ordering or limits)."""
        return self.raw is None and not self.order_by and self.offset is None and self.fetch is None

    def relation(self) -> str:
        """This query as a FROM item: the table name itself when it is a plain scan."""
        if self.projection_free and self.where is None and self.from_is_name:
            return self.from_
        return f"({self.sql()}) AS {quote(fresh_alias())}"

    def wrapped(self) -> SelectSpec:
        """A new block reading this one."""
        if self.projection_free and self.where is None:
            return self
        return SelectSpec(from_=self.relation())

    # ------------------------------------------------------------------ SQL
    def sql(self) -> str:
        if self.raw is not None:
            return self.raw
        parts = ["SELECT", "DISTINCT" if self.distinct else "", ", ".join(self.select) if self.select else "*"]
        parts += ["FROM", self.from_]
        if self.where is not None:
            parts += ["WHERE", self.where]
        if self.group_by:
            parts += ["GROUP BY", ", ".join(self.group_by)]
        if self.order_by:
            parts += ["ORDER BY", ", ".join(self.order_by)]
        if self.offset is not None:
            parts.append(f"OFFSET {self.offset} ROWS")
            if self.fetch is not None:
                parts.append(f"FETCH NEXT {self.fetch} ROWS ONLY")
        elif self.fetch is not None:
            parts.append(f"LIMIT {self.fetch}")
        return " ".join(p for p in parts if p)

    # ------------------------------------------------------------------ operations
    def with_select(self, items: list[str]) -> SelectSpec:
        base = self if self.projection_free else self.wrapped()
        return replace(base, select=tuple(items))

    def with_where(self, predicate: str) -> SelectSpec:
        if self.projection_free:
            where = predicate if self.where is None else f"({self.where}) AND {predicate}"
            return replace(self, where=where)
        return replace(self.wrapped(), where=predicate)

    def with_group(self, keys: list[str], items: list[str]) -> SelectSpec:
        base = self if self.projection_free else self.wrapped()
        return replace(base, group_by=tuple(keys), select=tuple(items))

    def with_distinct(self) -> SelectSpec:
        if self.raw is None and self.group_by is None and not self.distinct and self.sortable:
            return replace(self, distinct=True)
        return replace(self.wrapped(), distinct=True)

    def with_order(self, keys: list[str]) -> SelectSpec:
        base = self if self.sortable else self.wrapped()
        return replace(base, order_by=tuple(keys))

    def with_offset(self, n: int) -> SelectSpec:
        base = self if (self.raw is None and self.offset is None and self.fetch is None) else self.wrapped()
        return replace(base, offset=n)

    def with_fetch(self, n: int) -> SelectSpec:
        base = self if (self.raw is None and self.fetch is None) else self.wrapped()
        return replace(base, fetch=n)


def render_ctx(env: TableEnvironment, **kw: Any) -> RenderCtx:
    """A RenderCtx whose Python UDFs register in `env`'s function catalog."""
    return RenderCtx(register_udf=lambda w: register_udf(env, w), **kw)


def register_udf(env: TableEnvironment, wrapper: Any) -> str:
    """The name `wrapper` is called by in `env`: its own name when that is free (or already
    this function), else the name with a numeric suffix. Registered on first use."""
    # by id, holding the wrapper: a dead wrapper's id may be reused by a new one, which must
    # not inherit its name (it would call the other function)
    names: dict[int, tuple[Any, str]] = env.__dict__.setdefault("_table_api_udfs", {})
    entry = names.get(id(wrapper))
    known = entry[1] if entry is not None and entry[0] is wrapper else None
    if known is not None and env._functions().lookup(known) is not None:
        return known
    from planner.binder.expressions import AGGREGATE_FUNCTIONS
    from runtime.functions.registry import lookup as builtin

    # Unquoted in SQL (the binder recognizes aggregate calls by plain name): keep it an identifier.
    base = re.sub(r"\W", "_", str(getattr(wrapper, "__name__", "udf")).lower())
    if not base or base[0].isdigit():
        base = f"udf_{base}"
    taken = set(env._functions().names())
    name = base
    n = 1
    while name in taken or name in AGGREGATE_FUNCTIONS or builtin(name) is not None:
        n += 1
        name = f"{base}_{n}"
    env.create_temporary_function(name, wrapper)
    names[id(wrapper)] = (wrapper, name)
    return name


def render_all(exprs: list[Expression], ctx: RenderCtx) -> list[str]:
    return [e._render(ctx) for e in exprs]
