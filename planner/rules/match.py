"""MATCH_RECOGNIZE: the logical node and its physical conversion (the `Match` operator's
params, changelog mode and EXPLAIN line are in runtime/operators/match.py).

The binder (`planner.binder.match_recognize`) produces a `LogicalMatch` whose DEFINE and
MEASURES expressions are IR over an *extended row*: columns `0..n-1` are the current row
(the input's columns), columns `n + j` are navigation slot `j` (`slots[j]`, a
`runtime.operators.match_nfa.MatchSlot`): PREV / FIRST / LAST of a pattern variable's rows or an
aggregate over them. Keeping navigations as plain slot descriptions makes the JobGraph
pure data and lets the runtime compute each slot for many partial matches at once.
"""

from __future__ import annotations

from dataclasses import replace

from planner.logical import LogicalNode
from planner.physical import PhysicalNode, PhysicalPlanner, register_physical
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import STREAMING
from runtime.operators.match import MatchAfter, MatchOrderKey, MatchParams, match_explain_parts
from runtime.operators.match_nfa import MatchSlot, PatternElement


@frozen_dataclass
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
    slots: tuple[MatchSlot, ...]
    after: tuple[str, str | None]  # (PAST_LAST_ROW | TO_NEXT_ROW | TO_FIRST | TO_LAST, var)
    within_ms: int | None = None

    @property
    def inputs(self) -> tuple[LogicalNode, ...]:
        return (self.input,)

    def with_inputs(self, inputs: tuple[LogicalNode, ...]) -> LogicalNode:
        return replace(self, input=inputs[0])

    def params(self) -> MatchParams:
        return MatchParams(
            partition_keys=self.partition_keys,
            order_keys=tuple(MatchOrderKey(i, d) for i, d in self.order_keys),
            time_index=self.time_index,
            proctime=self.proctime,
            pattern=self.pattern,
            define=self.define,
            measures=self.measures,
            slots=self.slots,
            after=MatchAfter(*self.after),
            within_ms=self.within_ms,
        )

    def explain_line(self) -> str:
        names = [f"${i}" for i in range(len(self.input.fields))]
        parts = match_explain_parts(self.params(), names, [f.name for f in self.fields])
        return "LogicalMatch(" + ", ".join(parts) + ")"


@register_physical(LogicalMatch)
def _to_physical(planner: PhysicalPlanner, node: LogicalMatch) -> PhysicalNode:
    child = planner.convert(node.input)
    params = node.params()
    if planner.mode != STREAMING:
        params = replace(params, proctime=False)
    return PhysicalNode.distributed(params, (child,), node.fields)
