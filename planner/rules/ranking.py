"""Ranking: Top-N, deduplication, window Top-N / dedup, ORDER BY / LIMIT / OFFSET.

Logical nodes (bound by `planner.binder.ranking`):

- `LogicalRank`: `ROW_NUMBER()/RANK()/DENSE_RANK() OVER (PARTITION BY .. ORDER BY ..)`,
  output = input columns + the rank number (unless dropped). The binder creates it with an
  unbounded range; `absorb_rank_filter` (a logical rule, after calc merge) folds a filter
  on the rank column (`rn <= N`, `rn = 1`, `rn BETWEEN a AND b`, ...) into its range, as
  Flink's FlinkLogicalRankRule does, and projection pushdown drops the rank column when
  nobody reads it (`prune_columns`).
- `LogicalSort`: ORDER BY with optional OFFSET / FETCH (LIMIT).

Physical conversion picks Flink's operator: streaming `Rank` (or `Deduplicate` for a
ROW_NUMBER = 1 on a time attribute, `WindowRank` / `WindowDeduplicate` when partitioned by
a window TVF's window_start/window_end), `SortLimit`, `Limit`, `TemporalSort`; batch
`Rank`, `Sort`, `SortLimit`, `Limit`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

from planner.errors import UnsupportedSqlError
from planner.logical import (
    LogicalCalc,
    LogicalNode,
    LogicalProject,
    LogicalWindowAggregate,
    LogicalWindowTableFunction,
    _Single,
    transform_up,
)
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.config.options import key
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import frozen_dataclass
from runtime.graph import BATCH
from runtime.operators.rank import RankParams, SortLimitParams
from runtime.operators.rank_common import SortKey
from runtime.operators.rank_dedup import DeduplicateParams
from runtime.operators.rank_sort import LimitParams, SortParams, TemporalSortParams
from runtime.operators.rank_window import WindowDeduplicateParams, WindowRankParams
from runtime.plan_params import WindowParams
from runtime.types import BIGINT, BOOLEAN, Field

__all__ = ["SortKey"]  # re-exported: the binder builds the logical nodes' keys

RANK_TYPES = ("ROW_NUMBER", "RANK", "DENSE_RANK")

SORT_DEFAULT_LIMIT = (
    key("table.exec.sort.default-limit")
    .int_type()
    .default_value(-1)
    .with_description(
        "BATCH: an ORDER BY without LIMIT and OFFSET gets this LIMIT when it is above 0 (-1, 0: none), as "
        "Flink's batch sort conversion adds it (the plan shows a SortLimit). STREAMING ignores it."
    )
)
NOT_TIME_ORDERED = "OVER windows' ordering in stream mode must be defined on a time attribute."


@frozen_dataclass
class LogicalRank(_Single):
    """A ranking function over partitions; `rank_end` None = unbounded."""

    partition_keys: tuple[int, ...]
    order: tuple[SortKey, ...]
    rank_type: str = "ROW_NUMBER"
    rank_start: int = 1
    rank_end: int | None = None
    output_rank: bool = True

    @property
    def rank_index(self) -> int:
        return len(self.input.fields)

    def explain_line(self) -> str:
        part = ", ".join(f"${k}" for k in self.partition_keys)
        order = ", ".join(
            f"${k.index}{' DESC' if k.descending else ''}{' NULLS FIRST' if k.nulls_first else ' NULLS LAST'}"
            for k in self.order
        )
        cols = [f"{f.name}=[${i}]" for i, f in enumerate(self.input.fields)]
        over = f"{self.rank_type}() OVER ({'PARTITION BY ' + part + ' ' if part else ''}ORDER BY {order})"
        if self.rank_end is not None or self.rank_start != 1:
            end = self.rank_end if self.rank_end is not None else "unbounded"
            over += f" RANGE [{self.rank_start}, {end}]"
        if self.output_rank:
            cols.append(f"{self.fields[-1].name}=[{over}]")
        else:
            cols.append(f"rank=[{over}]")
        return "LogicalProject(" + ", ".join(cols) + ")"

    def prune_columns(self, required: set[int], prune: Any) -> tuple[LogicalNode, dict[int, int]]:
        """Projection pushdown: keep the input columns read above or by the ranking, and
        drop the rank number when nobody reads it (Flink's outputRankNumber=false)."""
        n = len(self.input.fields)
        need = {i for i in required if i < n} | set(self.partition_keys) | {k.index for k in self.order}
        child, m = prune(self.input, need)
        keep_rank = self.output_rank and n in required
        fields = tuple(child.fields) + ((self.fields[n],) if keep_rank else ())
        node = replace(
            self,
            input=child,
            fields=fields,
            partition_keys=tuple(m[k] for k in self.partition_keys),
            order=tuple(k.remap(m) for k in self.order),
            output_rank=keep_rank,
        )
        out = dict(m)
        if keep_rank:
            out[n] = len(child.fields)
        return node, out


@frozen_dataclass
class LogicalSort(_Single):
    """ORDER BY / OFFSET / FETCH; `order` empty for a plain LIMIT."""

    order: tuple[SortKey, ...]
    offset: int = 0
    fetch: int | None = None

    def explain_line(self) -> str:
        parts = []
        for i, k in enumerate(self.order):
            d = "DESC" if k.descending else "ASC"
            if k.nulls_first == k.descending:
                d += "-nulls-first" if k.nulls_first else "-nulls-last"
            parts += [f"sort{i}=[${k.index}]", f"dir{i}=[{d}]"]
        if self.offset:
            parts.append(f"offset=[{self.offset}]")
        if self.fetch is not None:
            parts.append(f"fetch=[{self.fetch}]")
        return "LogicalSort(" + ", ".join(parts) + ")"

    def prune_columns(self, required: set[int], prune: Any) -> tuple[LogicalNode, dict[int, int]]:
        child, m = prune(self.input, set(required) | {k.index for k in self.order})
        return replace(self, input=child, fields=child.fields, order=tuple(k.remap(m) for k in self.order)), m


def rank_field(name: str) -> Field:
    return Field(name, BIGINT(nullable=False))


# ---------------------------------------------------------------------- logical rule
def _int_literal(e: Expr) -> int | None:
    while isinstance(e, Call) and e.name == "cast" and len(e.args) == 1:
        e = e.args[0]
    if isinstance(e, Literal) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return int(e.value)
    return None


def _is_rank_ref(e: Expr, idx: int) -> bool:
    while isinstance(e, Call) and e.name == "cast" and len(e.args) == 1:
        e = e.args[0]
    return isinstance(e, InputRef) and e.index == idx


_FLIP = {
    "less_than": "greater_than",
    "less_than_or_equal": "greater_than_or_equal",
    "greater_than": "less_than",
    "greater_than_or_equal": "less_than_or_equal",
    "equals": "equals",
}


def _bound(c: Expr, idx: int) -> tuple[int | None, int | None] | None:
    """(lower, upper) inclusive bounds on the rank column implied by conjunct `c`."""
    if not isinstance(c, Call) or c.name not in _FLIP or len(c.args) != 2:
        return None
    a, b = c.args
    op = c.name
    if _is_rank_ref(b, idx) and not _is_rank_ref(a, idx):
        a, b, op = b, a, _FLIP[op]
    if not _is_rank_ref(a, idx):
        return None
    v = _int_literal(b)
    if v is None:
        return None
    return {
        "less_than": (None, v - 1),
        "less_than_or_equal": (None, v),
        "greater_than": (v + 1, None),
        "greater_than_or_equal": (v, None),
        "equals": (v, v),
    }[op]


def _conjuncts(e: Expr | None) -> list[Expr]:
    if e is None:
        return []
    if isinstance(e, Call) and e.name == "and":
        out: list[Expr] = []
        for a in e.args:
            out.extend(_conjuncts(a))
        return out
    return [e]


def _and(parts: list[Expr]) -> Expr | None:
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]

    return Call("and", tuple(parts), BOOLEAN(nullable=any(p.type.nullable for p in parts)))


def absorb_rank_filter(plan: LogicalNode) -> LogicalNode:
    """Fold conditions on the rank number of a LogicalRank just below a Calc into the
    rank's range (the Top-N pattern); the rest of the condition stays in the Calc."""

    def rule(node: LogicalNode) -> LogicalNode:
        if not isinstance(node, LogicalCalc) or node.condition is None or not isinstance(node.input, LogicalRank):
            return node
        rank = node.input
        if not rank.output_rank:
            return node
        idx = rank.rank_index
        lo, hi = rank.rank_start, rank.rank_end
        rest: list[Expr] = []
        absorbed = False
        for c in _conjuncts(node.condition):
            b = _bound(c, idx)
            if b is None:
                rest.append(c)
                continue
            absorbed = True
            if b[0] is not None:
                lo = max(lo, b[0])
            if b[1] is not None:
                hi = b[1] if hi is None else min(hi, b[1])
        if not absorbed:
            return node
        new_rank = replace(rank, rank_start=max(lo, 1), rank_end=hi)
        return replace(node, input=new_rank, condition=_and(rest))

    return transform_up(plan, rule)


# ---------------------------------------------------------------------- window detection
def _trace_window(node: LogicalNode, index: int) -> tuple[str, Any, LogicalNode] | None:
    """Follow column `index` of `node` down through projections to a window TVF or
    window aggregate: ("window_start"|"window_end"|"window_time", WindowSpec, node)."""
    while True:
        if isinstance(node, (LogicalCalc, LogicalProject)):
            e = node.exprs[index]
            if not isinstance(e, InputRef):
                return None
            node, index = node.input, e.index
            continue
        if isinstance(node, LogicalWindowTableFunction):
            n = len(node.input.fields)
            if index >= n:
                return (("window_start", "window_end", "window_time")[index - n], node.window, node)
            node = node.input
            continue
        if isinstance(node, LogicalWindowAggregate):
            base = len(node.grouping) + len(node.aggs)
            if index >= base:
                return (node.window_props[index - base], node.window, node)
            return None
        if node.inputs and len(node.inputs) == 1 and node.fields == node.inputs[0].fields:
            node = node.inputs[0]  # filters, watermark assigners
            continue
        return None


def window_of(rank: LogicalRank) -> tuple[Any, int, int] | None:
    """(WindowSpec, window_start index, window_end index) when `rank` is partitioned by
    the window_start and window_end of one window TVF / window aggregate."""
    found: dict[str, tuple[int, Any, int]] = {}
    for k in rank.partition_keys:
        t = _trace_window(rank.input, k)
        if t is not None and t[0] in ("window_start", "window_end"):
            found[t[0]] = (k, t[1], id(t[2]))
    if "window_start" in found and "window_end" in found and found["window_start"][2] == found["window_end"][2]:
        return found["window_end"][1], found["window_start"][0], found["window_end"][0]
    return None


# ---------------------------------------------------------------------- physical
def _rank_params(node: LogicalRank) -> RankParams:
    return RankParams(
        tuple(node.partition_keys), tuple(node.order), node.rank_type, node.rank_start, node.rank_end, node.output_rank
    )


def window_params(w: Any) -> WindowParams:
    """A logical WindowSpec as the runtime's typed window."""
    return WindowParams(w.kind, w.size_ms, w.slide_ms, w.step_ms, w.offset_ms, w.gap_ms, tuple(w.partition_keys))


def _time_kind(node: LogicalNode, index: int) -> str | None:
    return node.fields[index].type.time_attr


@register_physical(LogicalRank)
def _rank_physical(planner: PhysicalPlanner, node: LogicalRank) -> PhysicalNode:
    child = planner.convert(node.input)
    params = _rank_params(node)
    if planner.mode == BATCH:
        return PhysicalNode.distributed(params, (child,), node.fields, info={"batch": True})
    if node.rank_end is None:
        raise UnsupportedSqlError(NOT_TIME_ORDERED)
    window = window_of(node)
    if window is not None:
        spec, start_i, end_i = window
        if node.rank_type != "ROW_NUMBER":
            raise UnsupportedSqlError(
                f"{node.rank_type}() function is not supported on Window TopN currently, "
                "only ROW_NUMBER() is supported."
            )
        cls = WindowRankParams
        if _is_dedup(node) and _time_kind(node.input, node.order[0].index) == "ROWTIME":
            cls = WindowDeduplicateParams
        windowed = cls(
            **_fields(params), window=window_params(spec), window_start_index=start_i, window_end_index=end_i
        )
        return PhysicalNode.distributed(windowed, (child,), node.fields)
    if _is_dedup(node):
        time_kind = _time_kind(node.input, node.order[0].index)
        if time_kind is not None:
            dedup = DeduplicateParams(**_fields(params), time_kind=time_kind, keep_last=node.order[0].descending)
            return PhysicalNode.distributed(dedup, (child,), node.fields)
    return PhysicalNode.distributed(params, (child,), node.fields)


def _fields(p: RankParams) -> dict[str, Any]:
    """The Rank fields, for the params of the kinds that extend them."""
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(p)}


def _is_dedup(node: LogicalRank) -> bool:
    return (
        node.rank_type == "ROW_NUMBER"
        and node.rank_start == 1
        and node.rank_end == 1
        and not node.output_rank
        and len(node.order) == 1
    )


@register_physical(LogicalSort)
def _sort_physical(planner: PhysicalPlanner, node: LogicalSort) -> PhysicalNode:
    child = planner.convert(node.input)
    order = tuple(node.order)
    batch = {"batch": True} if planner.mode == BATCH else {}
    if not node.order:
        return PhysicalNode.distributed(LimitParams(node.offset, node.fetch), (child,), node.fields, info=batch)
    if planner.mode == BATCH:
        if node.fetch is None and not node.offset:
            default_limit = int(SORT_DEFAULT_LIMIT.get(planner.config))
            if default_limit > 0:  # Flink's FlinkLogicalSortBatchConverter: offset 0, fetch the default
                return PhysicalNode.distributed(
                    SortLimitParams(order, 0, default_limit), (child,), node.fields, info=batch
                )
            return PhysicalNode.distributed(SortParams(order), (child,), node.fields, info=batch)
        return PhysicalNode.distributed(
            SortLimitParams(order, node.offset, node.fetch), (child,), node.fields, info=batch
        )
    first = node.order[0]
    time_kind = _time_kind(node.input, first.index)
    if node.fetch is None:
        if time_kind is not None and not first.descending and not node.offset:
            return PhysicalNode.distributed(TemporalSortParams(order, time_kind), (child,), node.fields)
        raise UnsupportedSqlError("Sort on a non-time-attribute field is not supported.")
    return PhysicalNode.distributed(SortLimitParams(order, node.offset, node.fetch), (child,), node.fields)
