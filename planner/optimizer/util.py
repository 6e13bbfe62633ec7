"""Helpers shared by the rules: substituting expressions, identity checks, conjunctions,
rewriting keyed operators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from runtime.expr.ir import Call, Expr, InputRef
from runtime.operators.union import EXCHANGE
from runtime.types import BOOLEAN

if TYPE_CHECKING:
    from planner.physical import PhysicalNode


def rewrite_keyed(
    plan: PhysicalNode, operator: str, rewrite: Callable[[PhysicalNode], PhysicalNode | None]
) -> PhysicalNode:
    """Bottom-up, each shared subplan once: every `operator` node fed by an Exchange (the
    keyed shape the two-phase and split-distinct rules split) becomes `rewrite(node)`,
    or stays when that returns None."""
    memo: dict[int, PhysicalNode] = {}

    def visit(n: PhysicalNode) -> PhysicalNode:
        if id(n) in memo:
            return memo[id(n)]
        inputs = tuple(visit(i) for i in n.inputs)
        new = replace(n, inputs=inputs) if inputs != n.inputs else n
        if n.operator == operator and inputs and inputs[0].is_kind(EXCHANGE):
            new = rewrite(new) or new
        memo[id(n)] = new
        return new

    return visit(plan)


def substitute(e: Expr, exprs: tuple[Expr, ...] | list[Expr]) -> Expr:
    """`e` over a projection's output rewritten over the projection's input."""
    if isinstance(e, InputRef):
        return exprs[e.index]
    if isinstance(e, Call):
        return Call(e.name, tuple(substitute(a, exprs) for a in e.args), e.type)
    return e


def is_identity(exprs: tuple[Expr, ...], width: int) -> bool:
    """Whether `exprs` just pass through all `width` input columns in order."""
    return len(exprs) == width and all(isinstance(e, InputRef) and e.index == i for i, e in enumerate(exprs))


def conjunction(a: Expr | None, b: Expr | None) -> Expr | None:
    """`a AND b` (either may be absent); nested ANDs are flattened."""
    if a is None:
        return b
    if b is None:
        return a
    parts: list[Expr] = []
    for x in (a, b):
        if isinstance(x, Call) and x.name == "and":
            parts.extend(x.args)
        else:
            parts.append(x)
    nullable = any(p.type.nullable for p in parts)
    return Call("and", tuple(parts), BOOLEAN(nullable=nullable))


def is_deterministic(e: Expr) -> bool:
    if isinstance(e, Call):
        if e.name in ("rand", "rand_integer", "uuid", "current_timestamp", "now", "proctime", "localtimestamp"):
            return False
        if e.name == "current_watermark":  # the watermark where the call is: never moved
            return False
        return all(is_deterministic(a) for a in e.args)
    return True
