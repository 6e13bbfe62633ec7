"""MATCH_RECOGNIZE: the logical node, its physical conversion (`Match`), changelog mode and
EXPLAIN line.

The binder (`planner.binder.match_recognize`) produces a `LogicalMatch` whose DEFINE and
MEASURES expressions are IR over an *extended row*: columns `0..n-1` are the current row
(the input's columns), columns `n + j` are navigation slot `j` (`slots[j]`, see
`runtime.operators.match_nav`): PREV / FIRST / LAST of a pattern variable's rows or an
aggregate over them. Keeping navigations as plain slot descriptions makes the JobGraph
pure data and lets the runtime compute each slot for many partial matches at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from planner.changelog import register_changelog
from planner.explain import format_expr, register_physical_line
from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Expr
from runtime.graph import STREAMING
from runtime.operators.union import ExchangeParams


@dataclass(frozen=True)
class PatternElement:
    """One pattern variable with its quantifier: `max` None = unbounded."""

    var: str
    min: int
    max: int | None
    greedy: bool

    def text(self) -> str:
        if self.min == 1 and self.max == 1:
            q = ""
        elif self.min == 0 and self.max is None:
            q = "*"
        elif self.min == 1 and self.max is None:
            q = "+"
        elif self.min == 0 and self.max == 1:
            q = "?"
        elif self.max is None:
            q = f"{{{self.min},}}"
        elif self.min == self.max:
            q = f"{{{self.min}}}"
        else:
            q = f"{{{self.min},{self.max}}}"
        return self.var + q + ("" if self.greedy or not q else "?")

    def to_param(self) -> dict[str, Any]:
        return {"var": self.var, "min": self.min, "max": self.max, "greedy": self.greedy}


def slot_display(slot: dict[str, Any], names: list[str]) -> str:
    """How EXPLAIN shows a navigation slot (`PREV(price, 1)`, `LAST(A.price, 0)`, ...)."""
    col = names[slot["col"]] if slot.get("col") is not None else "*"
    var = slot.get("var")
    qual = f"{var}.{col}" if var else col
    kind = slot["kind"]
    if kind == "prev":
        return f"PREV({col}, {slot['offset']})"
    if kind == "rowtime":
        return "MATCH_ROWTIME()"
    if kind == "last" and slot["offset"] == 0:
        return qual if var else f"LAST({col}, 0)"
    if kind in ("first", "last"):
        return f"{kind.upper()}({qual}, {slot['offset']})"
    agg = slot["agg"]
    inner = qual if slot.get("col") is not None else (f"{var}.*" if var else "*")
    return f"{agg['name'].upper()}({inner})"


@dataclass(frozen=True)
class LogicalMatch(LogicalNode):
    """MATCH_RECOGNIZE (ONE ROW PER MATCH): output = partition columns, then measures."""

    input: LogicalNode
    partition_keys: tuple[int, ...]
    order_keys: tuple[tuple[int, bool], ...]  # (input index, descending)
    time_index: int | None  # the rowtime (or proctime) ORDER BY column
    proctime: bool
    pattern: tuple[PatternElement, ...]
    define: tuple[tuple[str, Expr], ...]
    measures: tuple[Expr, ...]
    slots: tuple[dict[str, Any], ...]
    after: tuple[str, str | None]  # (PAST_LAST_ROW | TO_NEXT_ROW | TO_FIRST | TO_LAST, var)
    within_ms: int | None = None

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def params(self) -> dict[str, Any]:
        return {
            "partition_keys": list(self.partition_keys),
            "order_keys": [{"index": i, "desc": d} for i, d in self.order_keys],
            "time_index": self.time_index,
            "proctime": self.proctime,
            "pattern": [p.to_param() for p in self.pattern],
            "define": {v: e for v, e in self.define},
            "measures": list(self.measures),
            "slots": [dict(s) for s in self.slots],
            "after": {"kind": self.after[0], "var": self.after[1]},
            "within_ms": self.within_ms,
            "rows_per_match": "ONE",
        }

    def explain_line(self) -> str:
        names = [f"${i}" for i in range(len(self.input.fields))]
        return "LogicalMatch(" + ", ".join(_parts(self.params(), names, [f.name for f in self.fields])) + ")"


_AFTER_TEXT = {
    "PAST_LAST_ROW": "SKIP PAST LAST ROW",
    "TO_NEXT_ROW": "SKIP TO NEXT ROW",
    "TO_FIRST": "SKIP TO FIRST {}",
    "TO_LAST": "SKIP TO LAST {}",
}


def _parts(p: dict[str, Any], in_names: list[str], out_names: list[str]) -> list[str]:
    ext = in_names + [slot_display(s, in_names) for s in p["slots"]]
    n_part = len(p["partition_keys"])
    measures = [f"{format_expr(e, ext)} AS {name}" for e, name in zip(p["measures"], out_names[n_part:], strict=True)]
    order = [f"{in_names[k['index']]} {'DESC' if k['desc'] else 'ASC'}" for k in p["order_keys"]]
    pattern = " ".join(PatternElement(**e).text() for e in p["pattern"])
    after = _AFTER_TEXT[p["after"]["kind"]].format(p["after"]["var"])
    parts = [
        f"partitionBy=[{', '.join(in_names[i] for i in p['partition_keys'])}]",
        f"orderBy=[{', '.join(order)}]",
        f"measures=[{', '.join(measures)}]",
        "rowsPerMatch=[ONE ROW PER MATCH]",
        f"after=[{after}]",
        f"pattern=[{pattern}]",
    ]
    if p.get("within_ms") is not None:
        parts.append(f"within=[{p['within_ms']} ms]")
    define = [f"{v}={format_expr(e, ext)}" for v, e in p["define"].items()]
    parts.append(f"define=[{', '.join(define)}]")
    return parts


@register_physical(LogicalMatch)
def _to_physical(planner: PhysicalPlanner, node: LogicalMatch) -> PhysicalNode:
    child = planner.convert(node.input)
    keys = list(node.partition_keys)
    ex = PhysicalNode.of(ExchangeParams.on(keys), (child,), child.fields)
    params = node.params()
    if planner.mode != STREAMING:
        params["proctime"] = False
    return PhysicalNode("Match", (ex,), node.fields, params)


@register_changelog("Match")
def _changelog(node: PhysicalNode, in_modes: list[str]) -> str:
    from planner.errors import UnsupportedSqlError

    if in_modes and in_modes[0] != "I":
        raise UnsupportedSqlError(
            f"Match Recognize doesn't support consuming update changes which is produced by node "
            f"{node.inputs[0].inputs[0].operator if node.inputs and node.inputs[0].inputs else 'input'}"
        )
    return "I"


@register_physical_line("Match")
def _line(node: PhysicalNode) -> list[str]:
    in_names = [f.name for f in node.inputs[0].fields]
    return _parts(node.params, in_names, [f.name for f in node.fields])
