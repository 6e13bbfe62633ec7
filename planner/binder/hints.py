"""The STATE_TTL query hint: `SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ ...`.

Flink (FLIP-373) lets a query block set the state TTL of its own regular joins (per input
side) and group aggregate, overriding `table.exec.state.ttl` for those operators only. A
key names an input of the block: a table's alias if it has one, else its name (also a
view's name, or a subquery's alias). For a join, the left side of the first join is the
FROM item and the right side of each join its JOIN item (a side that is itself a join has
no name); for a GROUP BY / DISTINCT the input is the block's single FROM item. A key that
names no input of the block is an error, as in Flink: "The options of following hints
cannot match the name of input tables or views". The value is a Flink duration ('1d',
'12 h', '30 min', '0' = never expire). Other hints are ignored.

The result is carried by `LogicalJoin.state_ttl_ms` (left, right) and
`LogicalAggregate.state_ttl_ms`, which become the node param `state_ttl_ms` (ms) read by
runtime/state/ttl.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from planner.binder.scope import error
from planner.errors import SqlValidationError
from planner.logical import LogicalAggregate, LogicalFilter, LogicalJoin, LogicalNode
from runtime.config import duration_ms

HINT_NAME = "STATE_TTL"


def _name_of(item: exp.Expression | None) -> str | None:
    """The name a FROM / JOIN item is known by in a hint: its alias, else a table's name."""
    if item is None:
        return None
    alias = item.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.name:
        return alias.name
    if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
        return item.name
    return None


def _option_key(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Literal) and node.is_string:
        return str(node.this)
    if isinstance(node, (exp.Column, exp.Identifier)):
        return node.name
    return None


@dataclass
class StateTtlHint:
    """The STATE_TTL options of one query block and which of them matched an input."""

    sql: str
    node: exp.Expression
    options: dict[str, int]
    used: set[str] = field(default_factory=set)
    applicable: bool = False  # the block has a join or aggregate the hint can apply to

    @classmethod
    def parse(cls, sel: exp.Select, sql: str) -> StateTtlHint | None:
        hint = sel.args.get("hint")
        if not isinstance(hint, exp.Hint):
            return None
        options: dict[str, int] = {}
        found: exp.Expression | None = None
        for h in hint.expressions:
            if not (isinstance(h, exp.Anonymous) and str(h.this).upper() == HINT_NAME):
                continue
            found = h
            for kv in h.expressions:
                key = _option_key(kv.this) if isinstance(kv, exp.EQ) else None
                value = kv.expression if isinstance(kv, exp.EQ) else None
                if key is None or not (isinstance(value, exp.Literal) and value.is_string):
                    raise error(
                        SqlValidationError,
                        "Invalid STATE_TTL hint: expected 'table' = 'duration' options, "
                        "e.g. /*+ STATE_TTL('o' = '1d') */",
                        kv,
                        sql,
                    )
                try:
                    options[key] = int(duration_ms(str(value.this), HINT_NAME) or 0)
                except ValueError as e:
                    raise error(SqlValidationError, f"Invalid STATE_TTL hint value: {e}", value, sql) from None
        if found is None:
            return None
        return cls(sql, found, options)

    def _ttl(self, name: str | None) -> int | None:
        if name is None or name not in self.options:
            return None
        self.used.add(name)
        return self.options[name]

    def apply_joins(self, plan: LogicalNode, from_item: exp.Expression | None, joins: list[exp.Join]) -> LogicalNode:
        """Set the TTL of the block's regular joins (the left-deep spine of `plan`)."""
        spine: list[LogicalJoin] = []
        node = plan
        while isinstance(node, LogicalJoin):
            spine.append(node)
            node = node.left
        spine.reverse()  # bottom-up = the order of the JOIN clauses
        self.applicable |= bool(spine)
        regular = [j for j in joins if not isinstance(j.this, (exp.Unnest, exp.Lateral))]
        if not spine or len(spine) != len(regular):
            return plan  # LATERAL / UNNEST items interleaved: leave the plan as it is
        first_is_from = not any(isinstance(j.this, (exp.Unnest, exp.Lateral)) for j in joins[:1])
        rebuilt: LogicalNode = node
        for i, (join, clause) in enumerate(zip(spine, regular, strict=True)):
            left = self._ttl(_name_of(from_item)) if i == 0 and first_is_from else None
            right = self._ttl(_name_of(clause.this))
            ttl = None if left is None and right is None else (left, right)
            rebuilt = replace(join, left=rebuilt, state_ttl_ms=ttl)
        return rebuilt

    def apply_aggregate(
        self, plan: LogicalNode, from_item: exp.Expression | None, joins: list[exp.Join]
    ) -> LogicalNode:
        """Set the TTL of the block's group aggregate when the hint names its input."""
        agg = plan.input if isinstance(plan, LogicalFilter) else plan
        self.applicable |= isinstance(agg, LogicalAggregate)
        if joins:
            return plan
        ttl = self._ttl(_name_of(from_item))
        if ttl is None:
            return plan
        if isinstance(plan, LogicalFilter) and isinstance(plan.input, LogicalAggregate):  # HAVING
            return replace(plan, input=replace(plan.input, state_ttl_ms=ttl))
        if isinstance(plan, LogicalAggregate):
            return replace(plan, state_ttl_ms=ttl)
        return plan

    def check(self) -> None:
        """Every option must have named an input of the block (Flink's hint validation);
        a hint on a block without join or aggregate is ignored, as in Flink."""
        if not self.applicable:
            return
        unused = [k for k in self.options if k not in self.used]
        if unused:
            listed = "\n".join(f"`{k}` in `state_ttl`" for k in unused)
            raise error(
                SqlValidationError,
                f"The options of following hints cannot match the name of input tables or views: \n{listed}",
                self.node,
                self.sql,
            )
