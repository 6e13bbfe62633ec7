"""GROUP BY GROUPING SETS / ROLLUP / CUBE and the GROUPING(), GROUPING_ID() functions.

The GROUP BY clause is flattened into its distinct group expressions and a list of
grouping sets (Calcite's semantics: the elements of GROUP BY combine by cross product;
CUBE(a, b) = {a, b}, {a}, {b}, {}; ROLLUP(a, b) = {a, b}, {a}, {}). The plan is Flink's:
pre-projection → Expand (one copy per set, keys outside the set NULL, expand id `$e`) →
GroupAggregate keyed by the keys and `$e` → the SELECT projection, where GROUPING() and
GROUPING_ID() are CASE expressions over `$e`.
"""

from __future__ import annotations

from itertools import combinations

from sqlglot import exp

from planner.binder.aggregates import AggregateScope
from planner.binder.scope import Scope, error
from planner.errors import SqlValidationError
from planner.logical import LogicalAggregate, LogicalNode
from runtime.expr.ir import Call, Expr, InputRef, Literal, remap_refs
from runtime.types import BIGINT, BOOLEAN, DataType, Field

EXPAND_ID = -4  # placeholder index of `$e` while SELECT / HAVING are bound


def _unwrap(e: exp.Expression) -> exp.Expression:
    while isinstance(e, exp.Paren):
        e = e.this
    return e


def _units(nodes: list[exp.Expression]) -> list[list[exp.Expression]]:
    """CUBE / ROLLUP operands: a parenthesized list is one unit."""
    out = []
    for n in nodes:
        n = _unwrap(n) if not isinstance(n, exp.Tuple) else n
        out.append(list(n.expressions) if isinstance(n, exp.Tuple) else [n])
    return out


def _element_sets(e: exp.Expression) -> list[list[exp.Expression]]:
    """The grouping sets one GROUP BY element stands for (each a list of expressions)."""
    if isinstance(e, exp.Cube):
        units = _units(list(e.expressions))
        sets = []
        for r in range(len(units), -1, -1):
            for combo in combinations(range(len(units)), r):
                sets.append([x for i in combo for x in units[i]])
        return sets
    if isinstance(e, exp.Rollup):
        units = _units(list(e.expressions))
        return [[x for u in units[:r] for x in u] for r in range(len(units), -1, -1)]
    if isinstance(e, exp.GroupingSets):
        out: list[list[exp.Expression]] = []
        for x in e.expressions:
            if isinstance(x, exp.Tuple):
                combined: list[list[exp.Expression]] = [[]]
                for part in x.expressions:
                    combined = [a + b for a in combined for b in _element_sets(part)]
                out.extend(combined)
            else:
                out.extend(_element_sets(_unwrap(x)) if isinstance(_unwrap(x), (exp.Cube, exp.Rollup)) else [[x]])
        return out
    if isinstance(e, exp.Tuple):
        return [list(e.expressions)]
    return [[e]]


def grouping_items(group: exp.Group | None) -> tuple[list[exp.Expression], list[list[int]] | None]:
    """The distinct group expressions (first appearance order) and the grouping sets as
    positions into them; None for a plain GROUP BY."""
    if group is None:
        return [], None
    elements: list[exp.Expression] = list(group.expressions)
    for key in ("grouping_sets", "cube", "rollup"):
        v = group.args.get(key)
        if v:
            elements.extend(v if isinstance(v, list) else [v])
    has_sets = any(isinstance(e, (exp.GroupingSets, exp.Cube, exp.Rollup)) for e in elements)
    if not has_sets:
        return elements, None
    sets: list[list[exp.Expression]] = [[]]
    for e in elements:
        sets = [a + b for a in sets for b in _element_sets(e)]
    items: list[exp.Expression] = []
    texts: list[str] = []
    out_sets: list[list[int]] = []
    for s in sets:
        pos = []
        for x in s:
            x = _unwrap(x)
            t = x.sql()
            if t not in texts:
                texts.append(t)
                items.append(x)
            pos.append(texts.index(t))
        out_sets.append(sorted(set(pos)))
    return items, out_sets


def expand_id(n_keys: int, members: frozenset[int]) -> int:
    """Flink's `$e`: first key = highest bit, a bit set when the key is not in the set."""
    v = 0
    for i in range(n_keys):
        if i not in members:
            v |= 1 << (n_keys - 1 - i)
    return v


class GroupingSetsScope(AggregateScope):
    """AggregateScope for GROUPING SETS: output = keys, `$e`, aggregates."""

    def __init__(
        self,
        from_scope: Scope,
        sql: str | None,
        keys: list[Expr],
        key_types: list[DataType],
        sets: list[frozenset[int]],
        node: exp.Expression | None,
    ) -> None:
        # Calcite's order: enclosing sets first, then natural order (a repeated set stays
        # next to its first occurrence).
        self.sets = sorted(sets, key=lambda s: (-len(s), sorted(s)))
        # GROUP_ID of each set: how many times it occurred before (GROUPING SETS ((k), (k))
        # groups the rows twice, GROUP_ID 0 and 1); a repeat gets its own expand id `$e`
        # (above the key bits) so the two groupings do not merge.
        self.group_ids: list[int] = [self.sets[:i].count(s) for i, s in enumerate(self.sets)]
        self.eids = [expand_id(len(keys), s) + (g << len(keys)) for s, g in zip(self.sets, self.group_ids, strict=True)]
        always = frozenset.intersection(*self.sets) if self.sets else frozenset()
        key_types = [t if i in always else t.with_nullable(True) for i, t in enumerate(key_types)]
        super().__init__(from_scope, sql, keys, key_types, None)

    def _pre_index(self, e: Expr) -> int:
        # Aggregate arguments never share a key column: Expand NULLs keys outside a set.
        k = len(self.keys)
        for i, p in enumerate(self.pre[k:], start=k):
            if p == e and p.type.nullable == e.type.nullable:
                return i
        self.pre.append(e)
        return len(self.pre) - 1

    # ------------------------------------------------------------------ functions
    def grouping_function(self, name: str, node: exp.Expression, args: list[exp.Expression]) -> Expr:
        t = BIGINT(nullable=False)
        if name == "group_id":
            return self._per_set(self.group_ids, t)
        idx = []
        for a in args:
            ref = self.match_group(a)
            if not isinstance(ref, InputRef):
                raise error(
                    SqlValidationError, f"Argument to {name.upper()} operator must be a grouped expression", a, self.sql
                )
            idx.append(ref.index)
        if not idx:
            raise error(SqlValidationError, f"Invalid number of arguments to function '{name.upper()}'", node, self.sql)
        values = []
        for s in self.sets:
            v = 0
            for pos, k in enumerate(idx):
                if k not in s:
                    v |= 1 << (len(idx) - 1 - pos)
            values.append(v)
        return self._per_set(values, t)

    def _per_set(self, values: list[int], t: DataType) -> Expr:
        """The value of each grouping set (in `self.sets` order) for the row's set: a
        CASE over the expand id `$e` (a constant when all sets agree)."""
        if len(set(values)) == 1:
            return Literal(values[0], t)
        e_ref = InputRef(EXPAND_ID, t)
        case_args: list[Expr] = []
        for eid, v in zip(self.eids[:-1], values[:-1], strict=True):
            cond = Call("equals", (e_ref, Literal(eid, t)), BOOLEAN(nullable=False))
            case_args += [cond, Literal(v, t)]
        case_args.append(Literal(values[-1], t))
        return Call("case", tuple(case_args), t)

    # ------------------------------------------------------------------ plan
    def _aggregate_node(self, pre: LogicalNode, key_names: list[str], out_names: dict[int, str]) -> LogicalNode:
        from planner.rules.grouping_sets import LogicalExpand  # start-up

        k = len(self.keys)
        et = BIGINT(nullable=False)
        exp_fields = [Field(f.name, self.key_types[i]) if i < k else f for i, f in enumerate(pre.fields)] + [
            Field("$e", et)
        ]
        projects = []
        for s, eid in zip(self.sets, self.eids, strict=True):
            row: list[Expr] = []
            for i, f in enumerate(pre.fields):
                if i < k and i not in s:
                    row.append(Literal(None, self.key_types[i]))
                else:
                    row.append(InputRef(i, f.type))
            row.append(Literal(eid, et))
            projects.append(tuple(row))
        expand = LogicalExpand(
            fields=tuple(exp_fields), input=pre, projects=tuple(projects), expand_id_index=len(pre.fields)
        )
        names = [out_names.get(i, key_names[i]) for i in range(k)]
        names += [out_names.get(k + i, f"$f{k + 1 + i}") for i in range(len(self.aggs))]
        out = [Field(names[i], self.key_types[i]) for i in range(k)]
        out.append(Field("$e", et))
        out += [Field(names[k + i], a.type) for i, a in enumerate(self.aggs)]
        grouping = (*range(k), len(pre.fields))
        return LogicalAggregate(fields=tuple(out), input=expand, grouping=grouping, aggs=tuple(self.aggs))

    def finalize(self, e: Expr) -> Expr:
        k = len(self.keys)
        mapping = {i: i for i in range(k)}
        mapping.update({k + j: k + 1 + j for j in range(len(self.aggs))})
        mapping[EXPAND_ID] = k
        return remap_refs(e, mapping)


__all__ = ["GroupingSetsScope", "expand_id", "grouping_items"]
