"""MATCH_RECOGNIZE binding: `FROM t MATCH_RECOGNIZE (...) [AS x]` → `LogicalMatch`.

DEFINE and MEASURES expressions are rewritten before binding: every navigation (`A.price`,
`PREV(price, n)`, `FIRST/LAST(A.price, n)`, `SUM(A.price)`, `MATCH_ROWTIME()`) becomes a
synthetic column `__mr<j>` of an extended scope, described by slot `j` (see
`planner.rules.match`). The ordinary `ExprBinder` then types the rest.

Semantics (Flink's): in DEFINE of variable V an unqualified column is the current row,
`V.col` too (LAST over V's rows including the current one), `A.col` the last row mapped to
A so far, `PREV(col, n)` the row n before the current one within the match. In MEASURES
(ONE ROW PER MATCH, final semantics) `A.col` is the last row of A, an unqualified column
the match's last row.
"""

from __future__ import annotations

import re
from typing import Any

from sqlglot import exp

from planner.binder.expressions import ExprBinder, function_args, function_name
from planner.binder.query import BindContext
from planner.binder.scope import Scope, ScopeColumn, error
from planner.binder.types import plain
from planner.errors import SqlValidationError, UnsupportedSqlError
from planner.logical import LogicalNode
from planner.rules.match import LogicalMatch, MatchSlot, PatternElement
from runtime.aggregates.types import AGGREGATE_FUNCTIONS, infer_aggregate
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions.registry import FunctionTypeError
from runtime.plan_params import AggCallParams
from runtime.types import DataType, Field

_PATTERN_TOKEN = re.compile(
    r"\s*(?:(?P<var>[A-Za-z_][A-Za-z0-9_]*)|(?P<q>\*|\+|\?|\{\s*\d*\s*(?:,\s*\d*\s*)?\})(?P<r>\?)?|(?P<other>\S))"
)
_AFTER = re.compile(r"AFTER\s+MATCH\s+SKIP\s+(PAST\s+LAST\s+ROW|TO\s+NEXT\s+ROW|TO\s+(FIRST|LAST)\s+(\w+)|TO\s+(\w+))$")


def parse_pattern(text: str, node: exp.Expression | None, sql: str | None) -> tuple[PatternElement, ...]:
    """A flat PATTERN (variables with quantifiers, Flink supports no alternation/groups)."""
    body = text.strip()
    while body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    out: list[PatternElement] = []
    pos = 0
    while pos < len(body):
        m = _PATTERN_TOKEN.match(body, pos)
        if m is None or not m.group(0).strip():
            break
        pos = m.end()
        if m.group("var"):
            out.append(PatternElement(m.group("var"), 1, 1, True))
            continue
        if m.group("other"):
            raise error(
                UnsupportedSqlError,
                f"Unsupported pattern syntax '{m.group('other')}' in PATTERN ({text}): "
                "only a sequence of variables with quantifiers is supported",
                node,
                sql,
            )
        if not out or (out[-1].min, out[-1].max) != (1, 1) or not out[-1].greedy:
            raise error(SqlValidationError, f"Misplaced quantifier in PATTERN ({text})", node, sql)
        q = m.group("q")
        lo: int
        hi: int | None
        if q == "*":
            lo, hi = 0, None
        elif q == "+":
            lo, hi = 1, None
        elif q == "?":
            lo, hi = 0, 1
        else:
            inner = q[1:-1].replace(" ", "")
            if "," in inner:
                a, b = inner.split(",", 1)
                lo, hi = int(a or 0), (int(b) if b else None)
            else:
                lo = hi = int(inner)
        if m.group("r") is not None and (lo, hi) == (0, 1):
            # Flink's pattern translator: `A??` / `A{0,1}?` have no CEP counterpart
            raise error(UnsupportedSqlError, "Reluctant optional variables are not supported yet.", node, sql)
        out[-1] = PatternElement(out[-1].var, lo, hi, m.group("r") is None)
    if not out:
        raise error(SqlValidationError, "PATTERN must not be empty", node, sql)
    last = out[-1]
    if last.greedy and last.max != last.min:
        raise error(
            SqlValidationError,
            "Greedy quantifiers are not allowed as the last element of a Pattern yet. "
            "Finish your pattern with either a simple variable or reluctant quantifier.",
            node,
            sql,
        )
    for prev, cur in zip(out, out[1:], strict=False):
        if cur.min == 0 and prev.greedy and prev.max != prev.min:
            raise error(SqlValidationError, "Optional pattern cannot be preceded by greedy pattern", node, sql)
    return tuple(out)


class _Rewriter:
    """Replaces navigation constructs by slot columns; collects the slot descriptions."""

    def __init__(self, scope: Scope, variables: set[str], sql: str | None, time_index: int | None) -> None:
        self.scope = scope
        self.variables = variables
        self.sql = sql
        self.time_index = time_index
        self.slots: list[MatchSlot] = []
        self.n = len(scope.columns)

    def _slot(self, spec: dict[str, Any]) -> exp.Column:
        slot = MatchSlot(spec["kind"], spec["var"], spec["col"], int(spec["offset"]), spec["type"], spec.get("agg"))
        for j, s in enumerate(self.slots):
            if s == slot:
                return exp.column(f"__mr{j}")
        self.slots.append(slot)
        return exp.column(f"__mr{len(self.slots) - 1}")

    def _column(self, node: exp.Expression, what: str) -> tuple[str | None, InputRef]:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            raise error(UnsupportedSqlError, f"{what} supports only a column argument", node, self.sql)
        var = node.table or None
        if var is not None and var not in self.variables:
            raise error(SqlValidationError, f"Unknown pattern variable '{var}'", node, self.sql)
        return var, self._resolve(exp.column(node.name))

    def _resolve(self, column: exp.Column) -> InputRef:
        ref = self.scope.resolve(column)
        if not isinstance(ref, InputRef):
            raise error(UnsupportedSqlError, "MATCH_RECOGNIZE supports only plain columns here", column, self.sql)
        return ref

    def _offset(self, args: list[exp.Expression], default: int) -> int:
        if len(args) < 2:
            return default
        a = args[1]
        if isinstance(a, exp.Literal) and not a.is_string:
            return int(a.this)
        raise error(UnsupportedSqlError, "The navigation offset must be an integer literal", a, self.sql)

    def _typed(self, spec: dict[str, Any], ref: InputRef) -> dict[str, Any]:
        spec["type"] = plain(ref.type).with_nullable(True)
        return spec

    def rewrite(self, node: exp.Expression, in_measures: bool) -> exp.Expression:
        def fn(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Column) and n.table:
                var, ref = self._column(n, "A qualified column")
                return self._slot(self._typed({"kind": "last", "var": var, "col": ref.index, "offset": 0}, ref))
            if isinstance(n, exp.Column) and in_measures and not isinstance(n.this, exp.Star):
                ref = self._resolve(n)
                return self._slot(self._typed({"kind": "last", "var": None, "col": ref.index, "offset": 0}, ref))
            if not isinstance(n, exp.Func):
                return n
            name = function_name(n)
            args = function_args(n)
            if name in ("prev", "next"):
                if name == "next":
                    raise error(UnsupportedSqlError, "NEXT is not supported by Flink's MATCH_RECOGNIZE", n, self.sql)
                if args and isinstance(args[0], exp.Column) and args[0].table:
                    raise error(
                        UnsupportedSqlError, "Flink does not support physical offsets within partition.", n, self.sql
                    )
                var, ref = self._column(args[0] if args else n, "PREV")
                return self._slot(
                    self._typed({"kind": "prev", "var": None, "col": ref.index, "offset": self._offset(args, 1)}, ref)
                )
            if name in ("first", "last"):
                var, ref = self._column(args[0] if args else n, name.upper())
                return self._slot(
                    self._typed({"kind": name, "var": var, "col": ref.index, "offset": self._offset(args, 0)}, ref)
                )
            if name == "match_rowtime":
                if self.time_index is None:
                    raise error(SqlValidationError, "MATCH_ROWTIME() needs ORDER BY a rowtime attribute", n, self.sql)
                t = self.scope.columns[self.time_index].type
                spec = {"kind": "rowtime", "var": None, "col": self.time_index, "offset": 0, "type": t}
                return self._slot(spec)
            if name == "match_proctime":  # a proctime attribute: the time the match is emitted
                return exp.Anonymous(this="PROCTIME", expressions=[])
            if name in ("classifier", "match_number"):
                raise error(UnsupportedSqlError, f"{name.upper()}() is not supported yet", n, self.sql)
            if isinstance(n, exp.Count) or name in AGGREGATE_FUNCTIONS:
                return self._aggregate(n, name, args)
            return n

        return node.transform(fn, copy=True)

    def _aggregate(self, n: exp.Expression, name: str, args: list[exp.Expression]) -> exp.Expression:
        if args and isinstance(args[0], exp.Distinct):
            raise error(UnsupportedSqlError, "DISTINCT aggregates are not supported in MATCH_RECOGNIZE", n, self.sql)
        if not args or isinstance(args[0], exp.Star):
            col = None
            var = None
            arg_types: list[DataType] = []
        elif isinstance(args[0], exp.Column) and isinstance(args[0].this, exp.Star):
            var = args[0].table or None
            col = None
            arg_types = []
        else:
            var, ref = self._column(args[0], f"{name.upper()} in MATCH_RECOGNIZE")
            col = ref.index
            arg_types = [plain(ref.type)]
        try:
            t = infer_aggregate(name, arg_types)
        except FunctionTypeError as e:
            raise error(SqlValidationError, str(e), n, self.sql) from None
        call = AggCallParams(name, (0,) if col is not None else (), t)
        return self._slot({"kind": "agg", "var": var, "col": col, "offset": 0, "agg": call, "type": t})


def _bind(rw: _Rewriter, node: exp.Expression, in_measures: bool, clause: str) -> Expr:
    rewritten = rw.rewrite(node, in_measures)
    cols = list(rw.scope.columns) + [ScopeColumn(None, f"__mr{j}", rw.n + j, s.type) for j, s in enumerate(rw.slots)]
    return ExprBinder(Scope(cols, rw.sql), rw.sql, clause=clause).bind(rewritten)


def bind_match_recognize(
    ctx: BindContext, plan: LogicalNode, scope: Scope, mr: exp.MatchRecognize
) -> tuple[LogicalNode, Scope]:
    """The LogicalMatch over `plan` and the scope of its output (alias applied)."""
    sql = ctx.sql
    if str(mr.args.get("rows") or "ONE ROW PER MATCH").upper().split() != ["ONE", "ROW", "PER", "MATCH"]:
        raise error(UnsupportedSqlError, "Only ONE ROW PER MATCH is supported", mr, sql)
    # Scope of the input row: every column, no qualifier (variables qualify instead).
    in_scope = Scope([ScopeColumn(None, c.name, c.index, c.type) for c in scope.columns], sql)
    partition = []
    for p in mr.args.get("partition_by") or []:
        ref = ExprBinder(in_scope, sql, clause="PARTITION BY").bind(p)
        if not isinstance(ref, InputRef):
            raise error(UnsupportedSqlError, "PARTITION BY supports only columns", p, sql)
        partition.append(ref.index)
    order_node = mr.args.get("order")
    if order_node is None or not order_node.expressions:
        raise error(SqlValidationError, "MATCH_RECOGNIZE requires an ORDER BY on a time attribute", mr, sql)
    order: list[tuple[int, bool]] = []
    for o in order_node.expressions:
        ref = ExprBinder(in_scope, sql, clause="ORDER BY").bind(o.this)
        if not isinstance(ref, InputRef):
            raise error(UnsupportedSqlError, "ORDER BY supports only columns", o, sql)
        order.append((ref.index, bool(o.args.get("desc"))))
    first_t = in_scope.columns[order[0][0]].type
    if first_t.time_attr is None or order[0][1]:
        raise error(
            SqlValidationError,
            "You must specify either rowtime or proctime for order by as the first one.",
            order_node.expressions[0],
            sql,
        )
    proctime = first_t.time_attr == "PROCTIME"
    time_index = order[0][0]
    pattern_node = mr.args.get("pattern")
    pattern = parse_pattern(str(pattern_node.this if pattern_node is not None else ""), mr, sql)
    variables = {p.var for p in pattern}
    rw = _Rewriter(in_scope, variables, sql, None if proctime else time_index)
    define: list[tuple[str, Expr]] = []
    for d in mr.args.get("define") or []:
        var = d.alias
        if var not in variables:
            raise error(SqlValidationError, f"Unknown pattern variable '{var}' in DEFINE", d, sql)
        cond = _bind(rw, d.this, False, "DEFINE")
        if cond.type.name not in ("BOOLEAN", "NULL"):
            raise error(SqlValidationError, f"DEFINE of {var} must be a condition", d, sql)
        define.append((var, cond))
    measures: list[Expr] = []
    names: list[str] = []
    for i, m in enumerate(mr.args.get("measures") or []):
        item = m.this if isinstance(m, exp.MatchRecognizeMeasure) else m
        if isinstance(item, exp.Alias):
            names.append(item.alias)
            item = item.this
        else:
            names.append(f"EXPR${i}")
        measures.append(_bind(rw, item, True, "MEASURES"))
    after_text = " ".join(str(mr.args.get("after") or "AFTER MATCH SKIP TO NEXT ROW").upper().split())
    am = _AFTER.match(after_text)
    if am is None:
        raise error(UnsupportedSqlError, f"Unsupported {after_text}", mr, sql)
    if am.group(1).startswith("PAST"):
        after: tuple[str, str | None] = ("PAST_LAST_ROW", None)
    elif am.group(1).startswith("TO NEXT"):
        after = ("TO_NEXT_ROW", None)
    else:
        kind = am.group(2) or "LAST"
        raw_var = str(mr.args.get("after")).split()[-1]
        if raw_var not in variables:
            raise error(SqlValidationError, f"Unknown pattern variable '{raw_var}' in AFTER MATCH", mr, sql)
        after = (f"TO_{kind}", raw_var)
    within_ms = None
    within = mr.args.get("within")
    if within is not None:
        lit = ExprBinder(Scope([], sql), sql, clause="WITHIN").bind(within)
        if not isinstance(lit, Literal) or lit.type.name != "INTERVAL_DAY_TIME":
            raise error(SqlValidationError, "WITHIN requires a day-time interval literal", within, sql)
        within_ms = int(lit.value)
    fields = [Field(in_scope.columns[i].name, plain(in_scope.columns[i].type)) for i in partition]
    for name, e in zip(names, measures, strict=True):
        # MATCH_ROWTIME() (a slot of the rowtime) and MATCH_PROCTIME() (the PROCTIME() call)
        # stay time attributes; anything else is materialized
        keep = (isinstance(e, InputRef) and e.type.time_attr == "ROWTIME") or (
            isinstance(e, Call) and e.type.time_attr == "PROCTIME"
        )
        t = e.type if keep else plain(e.type)
        fields.append(Field(name, t))
    node = LogicalMatch(
        fields=tuple(fields),
        input=plan,
        partition_keys=tuple(partition),
        order_keys=tuple(order),
        time_index=time_index,
        proctime=proctime,
        pattern=pattern,
        define=tuple(define),
        measures=tuple(measures),
        slots=tuple(rw.slots),
        after=after,
        within_ms=within_ms,
    )
    alias = mr.args.get("alias")
    qualifier = str(alias.name if isinstance(alias, exp.Expression) else alias) if alias else None
    return node, Scope.of(node.fields, qualifier, sql)
