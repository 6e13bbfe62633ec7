"""The STATE_TTL query hint: `SELECT /*+ STATE_TTL('o' = '1d', 'c' = '12h') */ ...`.

Flink (FLIP-373) lets a query block set the state TTL of its own regular joins (per input
side) and group aggregate, overriding `table.exec.state.ttl` for those operators only. A
key names an input of the block: a table's alias if it has one, else its name (also a
view's name, or a subquery's alias). For a join, the left side of the first join is the
FROM item and the right side of each join its JOIN item (a side that is itself a join has
no name); for a GROUP BY / DISTINCT the input is the block's single FROM item. A key that
names no input of the block is an error, as in Flink: "The options of following hints
cannot match the name of input tables or views". The value is a Flink duration ('1d',
'12 h', '30 min', '0' = never expire). Join hints and the OPTIONS table hint are below.

The result is carried by `LogicalJoin.state_ttl_ms` (left, right) and
`LogicalAggregate.state_ttl_ms`, which become the node param `state_ttl_ms` (ms) read by
runtime/state/ttl.py.
"""

from __future__ import annotations

import re
from dataclasses import field, replace

from sqlglot import exp

from planner.binder.scope import error
from planner.catalog_objects import CatalogTable
from planner.errors import SqlValidationError
from planner.logical import LogicalAggregate, LogicalFilter, LogicalJoin, LogicalNode
from runtime.config import duration_ms
from runtime.connectors.validation import ConnectorOptionError, validate_table_options
from runtime.frozen import mutable_dataclass

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


@mutable_dataclass
class StateTtlHint:
    """The STATE_TTL options of one query block and which of them matched an input."""

    sql: str
    node: exp.Expression
    options: dict[str, int]
    texts: dict[str, str] = field(default_factory=dict)  # the values as written
    used: set[str] = field(default_factory=set)
    applicable: bool = False  # the block has a join or aggregate the hint can apply to

    @classmethod
    def parse(cls, sel: exp.Select, sql: str) -> StateTtlHint | None:
        hint = sel.args.get("hint")
        if not isinstance(hint, exp.Hint):
            return None
        options: dict[str, int] = {}
        texts: dict[str, str] = {}
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
                texts[key] = str(value.this)
                try:
                    options[key] = int(duration_ms(str(value.this), HINT_NAME) or 0)
                except ValueError as e:
                    raise error(SqlValidationError, f"Invalid STATE_TTL hint value: {e}", value, sql) from None
        if found is None:
            return None
        return cls(sql, found, options, texts)

    def _ttl(self, name: str | None) -> int | None:
        if name is None or name not in self.options:
            return None
        self.used.add(name)
        return self.options[name]

    def _text(self, name: str | None, ttl: int | None) -> str | None:
        return self.texts.get(name) if name is not None and ttl is not None else None

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
            names = (_name_of(from_item) if i == 0 and first_is_from else None, _name_of(clause.this))
            text = None if ttl is None else (self._text(names[0], left), self._text(names[1], right))
            rebuilt = replace(join, left=rebuilt, state_ttl_ms=ttl, state_ttl_text=text)
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


# Flink's join strategy hints (batch) and the LOOKUP hint (lookup joins): streamsql picks
# its own join strategy and lookup mode, so their effect is not reproduced, but the tables
# they name are validated as Flink's QueryHintsResolver does.
JOIN_HINTS = ("BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP")
LOOKUP_HINT = "LOOKUP"


def check_join_hints(sel: exp.Select, sql: str, from_item: exp.Expression | None, joins: list[exp.Join]) -> None:
    """Every table a join hint (`/*+ BROADCAST(t1, t3) */`, `/*+ LOOKUP('table'='c') */`) of
    the block names must be an input of one of its joins (an alias hides the table's name), or
    the query is refused with Flink's "The options of following hints cannot match the name of
    input tables or views". A block without joins ignores its join hints, as in Flink."""
    hint = sel.args.get("hint")
    if not isinstance(hint, exp.Hint) or not joins:
        return
    inputs = {n for n in [_name_of(from_item), *(_name_of(j.this) for j in joins)] if n is not None}
    unknown: dict[str, list[str]] = {}
    for h in hint.expressions:
        name = str(h.this).upper() if isinstance(h, exp.Anonymous) else None
        if name in JOIN_HINTS:
            tables = [t for t in (_option_key(o) for o in h.expressions) if t is not None]
        elif name == LOOKUP_HINT:
            tables = [
                str(kv.expression.this)
                for kv in h.expressions
                if isinstance(kv, exp.EQ) and _option_key(kv.this) == "table" and isinstance(kv.expression, exp.Literal)
            ]
        else:
            continue
        missing = [t for t in tables if not any(_matches(t, i) for i in inputs)]
        if missing:
            unknown.setdefault(str(h.this).lower(), []).extend(missing)
    if unknown:
        listed = "\n".join(f"`{', '.join(ts)}` in `{n}`" for n, ts in unknown.items())
        raise error(
            SqlValidationError,
            f"The options of following hints cannot match the name of input tables or views: \n{listed}",
            hint,
            sql,
        )


def _matches(option: str, name: str) -> bool:
    """Flink's rule: the hint option matches when it is a suffix of the (dotted) name."""
    opt, full = option.split("."), name.split(".")
    return all(a == b for a, b in zip(reversed(opt), reversed(full), strict=False))


# ---------------------------------------------------------------------- OPTIONS (table hint)
_OPTIONS_HINT = re.compile(r"\s*\+?\s*OPTIONS\s*\((?P<body>.*)\)\s*$", re.IGNORECASE | re.DOTALL)
_OPTION_PAIR = re.compile(r"\s*'((?:[^']|'')*)'\s*=\s*'((?:[^']|'')*)'\s*(,|$)")


def parse_options_comments(comments: list[str] | tuple[str, ...]) -> dict[str, str] | None:
    """The options of an `OPTIONS('k'='v', ...)` hint among sqlglot comments (it keeps a
    `/*+ ... */` hint as a comment of the node or token before it), or None. ValueError when
    the hint is not a list of quoted pairs."""
    found: dict[str, str] | None = None
    for comment in comments:
        m = _OPTIONS_HINT.match(comment)
        if m is None:
            continue
        body, pos = m.group("body"), 0
        found = {} if found is None else found
        while pos < len(body.rstrip()):
            kv = _OPTION_PAIR.match(body, pos)
            if kv is None:
                raise ValueError("Invalid OPTIONS hint: expected 'key' = 'value' pairs, e.g. /*+ OPTIONS('k' = 'v') */")
            found[kv.group(1).replace("''", "'")] = kv.group(2).replace("''", "'")
            pos = kv.end()
    return found


def options_hint(node: exp.Expression, sql: str | None) -> dict[str, str] | None:
    """The `/*+ OPTIONS('k'='v', ...) */` after a table name (Flink's dynamic table options),
    or None."""
    try:
        return parse_options_comments(node.comments or ())
    except ValueError as e:
        raise error(SqlValidationError, str(e), node, sql) from None


def with_options_hint(table: CatalogTable, node: exp.Expression, sql: str | None, sink: bool = False) -> CatalogTable:
    """`table` with the OPTIONS hint of `node` merged over its own options (the hint wins),
    checked like a WITH clause; an option the connector rejects is reported at the hint."""
    opts = options_hint(node, sql)
    if not opts:
        return table
    merged = replace(table, options={**table.options, **opts})
    try:
        validate_table_options(merged.options, merged.description(sink))
    except ConnectorOptionError as e:
        kind = "sink for writing" if sink else "source for reading"
        err = error(
            SqlValidationError,
            f"Unable to create a {kind} table '{'.'.join(table.path)}'.\n\n{e.message}",
            node,
            sql,
        )
        err.hint = e.hint
        raise err from None
    return merged
