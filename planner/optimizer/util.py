"""Helpers shared by the rules: substituting expressions, identity checks, conjunctions,
rewriting keyed operators."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from runtime.operators.union import EXCHANGE

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
