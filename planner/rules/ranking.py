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

from dataclasses import dataclass, replace
from typing import Any

from planner.changelog import register_changelog
from planner.errors import UnsupportedSqlError
from planner.explain import format_window, register_physical_line
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
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.graph import BATCH
from runtime.types import BIGINT, Field

RANK_TYPES = ("ROW_NUMBER", "RANK", "DENSE_RANK")
NOT_TIME_ORDERED = "OVER windows' ordering in stream mode must be defined on a time attribute."


@dataclass(frozen=True)
class SortKey:
    """One ORDER BY key over the node's input: column, direction, null placement."""

    index: int
    descending: bool = False
    nulls_first: bool = True

    def to_param(self) -> dict[str, Any]:
        return {"index": self.index, "descending": self.descending, "nulls_first": self.nulls_first}

    def remap(self, m: dict[int, int]) -> SortKey:
        return replace(self, index=m[self.index])


def format_order(keys: list[dict[str, Any]] | tuple[SortKey, ...], names: list[str]) -> str:
    """Flink's `orderBy=[v DESC, k ASC]` (null placement shown when not the default)."""
    parts = []
    for k in keys:
        d = k.to_param() if isinstance(k, SortKey) else k
        text = f"{names[d['index']]} {'DESC' if d['descending'] else 'ASC'}"
        if d["nulls_first"] == bool(d["descending"]):  # default: ASC nulls first, DESC nulls last
            text += " NULLS FIRST" if d["nulls_first"] else " NULLS LAST"
        parts.append(text)
    return ", ".join(parts)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
    from runtime.types import BOOLEAN

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
def _single_or_hash(planner: PhysicalPlanner, child: PhysicalNode, keys: list[int]) -> PhysicalNode:
    return planner._exchange(child, keys)  # noqa: SLF001 - the shared Exchange builder


def _rank_params(node: LogicalRank) -> dict[str, Any]:
    return {
        "partition_keys": list(node.partition_keys),
        "order": [k.to_param() for k in node.order],
        "rank_type": node.rank_type,
        "rank_start": node.rank_start,
        "rank_end": node.rank_end,
        "output_rank": node.output_rank,
    }


def _time_kind(node: LogicalNode, index: int) -> str | None:
    return node.fields[index].type.time_attr


@register_physical(LogicalRank)
def _rank_physical(planner: PhysicalPlanner, node: LogicalRank) -> PhysicalNode:
    child = planner.convert(node.input)
    ex = _single_or_hash(planner, child, list(node.partition_keys))
    params = _rank_params(node)
    if planner.mode == BATCH:
        return PhysicalNode("Rank", (ex,), node.fields, params, info={"batch": True})
    if node.rank_end is None:
        raise UnsupportedSqlError(NOT_TIME_ORDERED)
    window = window_of(node)
    if window is not None:
        spec, start_i, end_i = window
        keys = [k for k in node.partition_keys if k not in (start_i, end_i)]
        ex = _single_or_hash(planner, child, keys)
        params.update({"window": spec.to_param(), "window_start_index": start_i, "window_end_index": end_i})
        if node.rank_type != "ROW_NUMBER":
            raise UnsupportedSqlError(
                f"{node.rank_type}() function is not supported on Window TopN currently, "
                "only ROW_NUMBER() is supported."
            )
        if _is_dedup(node) and _time_kind(node.input, node.order[0].index) == "ROWTIME":
            return PhysicalNode("WindowDeduplicate", (ex,), node.fields, params)
        return PhysicalNode("WindowRank", (ex,), node.fields, params)
    if _is_dedup(node) and _time_kind(node.input, node.order[0].index) is not None:
        params["time_kind"] = _time_kind(node.input, node.order[0].index)
        params["keep_last"] = node.order[0].descending
        return PhysicalNode("Deduplicate", (ex,), node.fields, params)
    return PhysicalNode("Rank", (ex,), node.fields, params)


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
    ex = _single_or_hash(planner, child, [])
    params: dict[str, Any] = {"order": [k.to_param() for k in node.order], "offset": node.offset, "fetch": node.fetch}
    batch = {"batch": True} if planner.mode == BATCH else {}
    if not node.order:
        return PhysicalNode("Limit", (ex,), node.fields, params, info=batch)
    if planner.mode == BATCH:
        if node.fetch is None and not node.offset:
            return PhysicalNode("Sort", (ex,), node.fields, params, info=batch)
        return PhysicalNode("SortLimit", (ex,), node.fields, params, info=batch)
    first = node.order[0]
    time_first = _time_kind(node.input, first.index) is not None and not first.descending
    if node.fetch is None:
        if time_first and not node.offset:
            params["time_kind"] = _time_kind(node.input, first.index)
            return PhysicalNode("TemporalSort", (ex,), node.fields, params)
        raise UnsupportedSqlError("Sort on a non-time-attribute field is not supported.")
    return PhysicalNode("SortLimit", (ex,), node.fields, params)


# ---------------------------------------------------------------------- changelog modes
def _updating(modes: list[str]) -> bool:
    return any(m != "I" for m in modes)


@register_changelog("Rank")
@register_changelog("SortLimit")
def _rank_changelog(n: PhysicalNode, modes: list[str]) -> str:
    return "I,UB,UA,D"


@register_changelog("Deduplicate")
def _dedup_changelog(n: PhysicalNode, modes: list[str]) -> str:
    if _updating(modes):
        raise UnsupportedSqlError("Deduplicate doesn't support consuming update and delete changes")
    return "I,UB,UA" if n.params.get("keep_last") else "I"


@register_changelog("WindowRank")
@register_changelog("WindowDeduplicate")
@register_changelog("TemporalSort")
@register_changelog("Limit")
def _insert_only_changelog(n: PhysicalNode, modes: list[str]) -> str:
    if _updating(modes):
        raise UnsupportedSqlError(f"{n.operator} doesn't support consuming update and delete changes")
    return "I"


# ---------------------------------------------------------------------- EXPLAIN
def _in_names(n: PhysicalNode) -> list[str]:
    return [f.name for f in n.inputs[0].fields] if n.inputs else []


def _strategy(n: PhysicalNode) -> str:
    mode = n.inputs[0].changelog_mode if n.inputs else "I"
    return "AppendFastStrategy" if mode == "I" else "RetractStrategy"


def _select(n: PhysicalNode) -> str:
    names = _in_names(n)
    if n.params.get("output_rank"):
        names = names + ["w0$o0"]
    return ", ".join(names)


def _range(p: dict[str, Any]) -> str:
    end = p["rank_end"] if p.get("rank_end") is not None else "unbounded"
    return f"rankRange=[rankStart={p['rank_start']}, rankEnd={end}]"


def _window_text(n: PhysicalNode) -> str:
    names = _in_names(n)
    p = n.params
    w = format_window(p["window"], "x")
    inner = w[w.index("(") + 1 : -1].replace("time_col=[x]", "")
    inner = f"win_start=[{names[p['window_start_index']]}], win_end=[{names[p['window_end_index']]}]" + (
        ", " + inner.lstrip(", ") if inner.strip(", ") else ""
    )
    return f"window=[{p['window']['kind']}({inner})]"


def _partition(n: PhysicalNode, skip: tuple[int, ...] = ()) -> str:
    names = _in_names(n)
    return ", ".join(names[k] for k in n.params["partition_keys"] if k not in skip)


@register_physical_line("Rank")
def _rank_line(n: PhysicalNode) -> list[str]:
    p = n.params
    parts: list[str] = []
    if not _is_batch_node(n):
        parts.append(f"strategy=[{_strategy(n)}]")
    parts += [f"rankType=[{p['rank_type']}]", _range(p), f"partitionBy=[{_partition(n)}]"]
    parts.append(f"orderBy=[{format_order(p['order'], _in_names(n))}]")
    if _is_batch_node(n):
        parts.append("global=[true]")
    parts.append(f"select=[{_select(n)}]")
    return parts


def _is_batch_node(n: PhysicalNode) -> bool:
    """Batch nodes are marked by the physical conversion (their EXPLAIN lines differ)."""
    return bool(n.info.get("batch"))


@register_physical_line("Deduplicate")
def _dedup_line(n: PhysicalNode) -> list[str]:
    p = n.params
    return [
        f"keep=[{'LastRow' if p.get('keep_last') else 'FirstRow'}]",
        f"key=[{_partition(n)}]",
        f"order=[{p.get('time_kind') or 'ROWTIME'}]",
    ]


@register_physical_line("WindowRank")
def _window_rank_line(n: PhysicalNode) -> list[str]:
    p = n.params
    skip = (p["window_start_index"], p["window_end_index"])
    return [
        _window_text(n),
        f"rankType=[{p['rank_type']}]",
        _range(p),
        f"partitionBy=[{_partition(n, skip)}]",
        f"orderBy=[{format_order(p['order'], _in_names(n))}]",
        f"select=[{_select(n)}]",
    ]


@register_physical_line("WindowDeduplicate")
def _window_dedup_line(n: PhysicalNode) -> list[str]:
    p = n.params
    skip = (p["window_start_index"], p["window_end_index"])
    order = p["order"][0]
    return [
        _window_text(n),
        f"keep=[{'LastRow' if order['descending'] else 'FirstRow'}]",
        f"partitionKeys=[{_partition(n, skip)}]",
        f"orderKey=[{_in_names(n)[order['index']]}]",
        "order=[ROWTIME]",
    ]


def _offset_fetch(p: dict[str, Any]) -> list[str]:
    fetch = p["fetch"] if p.get("fetch") is not None else "unlimited"
    return [f"offset=[{p.get('offset') or 0}]", f"fetch=[{fetch}]"]


@register_physical_line("SortLimit")
def _sort_limit_line(n: PhysicalNode) -> list[str]:
    parts = [f"orderBy=[{format_order(n.params['order'], _in_names(n))}]"] + _offset_fetch(n.params)
    parts.append("global=[true]" if _is_batch_node(n) else f"strategy=[{_strategy(n)}]")
    return parts


@register_physical_line("Sort")
@register_physical_line("TemporalSort")
def _sort_line(n: PhysicalNode) -> list[str]:
    return [f"orderBy=[{format_order(n.params['order'], _in_names(n))}]"]


@register_physical_line("Limit")
def _limit_line(n: PhysicalNode) -> list[str]:
    return _offset_fetch(n.params) + (["global=[true]"] if _is_batch_node(n) else [])
