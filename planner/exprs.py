"""Expression helpers shared by the planner's rules and optimizer phases (over the
runtime's expression IR): substitution through a projection, AND-combination, and
whether an expression is deterministic."""

from __future__ import annotations

from runtime.expr.ir import Call, Expr, InputRef
from runtime.functions import registry
from runtime.types import BOOLEAN


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
    """Whether `e` calls no non-deterministic function (each function declares it in the
    registry: RAND, NOW, CURRENT_WATERMARK (the watermark where the call is), ...)."""
    if isinstance(e, Call):
        return registry.is_deterministic(e.name) and all(is_deterministic(a) for a in e.args)
    return True
