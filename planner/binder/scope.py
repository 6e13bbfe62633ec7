"""Name resolution: which column of the current input row a (possibly qualified) name
refers to, plus the helpers that turn a sqlglot node into an error position.

Identifiers are case-sensitive (Flink's default). Errors carry the line/column of the
offending node as the parser recorded it in `meta` (relative to the statement).
"""

from __future__ import annotations

from dataclasses import field, replace

from sqlglot import exp

from planner.errors import SqlError, SqlValidationError, did_you_mean
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.frozen import frozen_dataclass, mutable_dataclass
from runtime.types import STRING, DataType, Field


def node_position(node: exp.Expression | None) -> tuple[int | None, int | None]:
    """(line, column) of the leftmost token of `node` that carries a position."""
    if node is None:
        return (None, None)
    best: tuple[int, int] | None = None
    for n in node.walk():
        meta = n._meta if hasattr(n, "_meta") else None  # noqa: SLF001 - avoid creating meta dicts
        if meta and "line" in meta and "col" in meta:
            pos = (int(meta["line"]), int(meta["col"]))
            if best is None or pos < best:
                best = pos
    return best if best is not None else (None, None)


CALCITE_VALIDATOR = "org.apache.calcite.sql.validate.SqlValidatorException"


def error(cls: type[SqlError], message: str, node: exp.Expression | None, sql: str | None) -> SqlError:
    """An error of class `cls` located at `node`: line and column in the statement's own
    text, so the caret points at what the user wrote."""
    line, col = node_position(node)
    err = cls(message, sql=sql, line=line, column=col)
    if cls is SqlValidationError:  # query validation is Calcite's in Flink: name its class
        err.flink_class = CALCITE_VALIDATOR
    return err


@frozen_dataclass
class ScopeColumn:
    """A column a name can resolve to: its table qualifier, name, index in the row and type."""

    qualifier: str | None  # table alias (or name) the column belongs to
    name: str
    index: int
    type: DataType
    # A column of a JOIN ... USING / NATURAL JOIN side that the join merged into one
    # unqualified column: reachable as `t.c` (and in `t.*`) only.
    qualified_only: bool = False


@mutable_dataclass
class Scope:
    """The columns visible in a clause: those of the FROM relation(s), in row order."""

    columns: list[ScopeColumn] = field(default_factory=list)
    sql: str | None = None

    @staticmethod
    def of(fields: tuple[Field, ...] | list[Field], qualifier: str | None, sql: str | None = None) -> Scope:
        return Scope([ScopeColumn(qualifier, f.name, i, f.type) for i, f in enumerate(fields)], sql)

    def concat(self, other: Scope) -> Scope:
        """The scope of a join: this scope's columns then `other`'s, re-indexed."""
        n = len(self.columns)
        cols = list(self.columns) + [replace(c, index=c.index + n) for c in other.columns]
        return Scope(cols, self.sql)

    @property
    def qualifiers(self) -> list[str]:
        seen: list[str] = []
        for c in self.columns:
            if c.qualifier is not None and c.qualifier not in seen:
                seen.append(c.qualifier)
        return seen

    def resolve(self, column: exp.Column) -> Expr:
        """The input reference for `column` (`k` or `t.k`), or a validation error. A name
        whose first part is a ROW column rather than a table (`person.id`, `t.person.id`)
        is a field access."""
        parts = [p.name for p in column.parts]
        nested = self._nested_access(parts, column)
        if nested is not None:
            return nested
        name = column.name
        qualifier = column.table or None
        if qualifier is not None:
            if qualifier not in self.qualifiers:
                hint = did_you_mean(qualifier, self.qualifiers)
                raise _with_hint(error(SqlValidationError, f"Table '{qualifier}' not found", column, self.sql), hint)
            matches = [c for c in self.columns if c.qualifier == qualifier and c.name == name]
            if not matches:
                cands = [c.name for c in self.columns if c.qualifier == qualifier]
                raise _with_hint(
                    error(SqlValidationError, f"Column '{name}' not found in table '{qualifier}'", column, self.sql),
                    did_you_mean(name, cands),
                )
        else:
            matches = [c for c in self.columns if c.name == name and not c.qualified_only]
            if not matches:
                raise _with_hint(
                    error(SqlValidationError, f"Column '{name}' not found in any table", column, self.sql),
                    did_you_mean(name, [c.name for c in self.columns]),
                )
        if len(matches) > 1:
            raise error(SqlValidationError, f"Column '{name}' is ambiguous", column, self.sql)
        c = matches[0]
        return InputRef(c.index, c.type)

    def _nested_access(self, parts: list[str], node: exp.Column) -> Expr | None:
        """`row_col.f1.f2` or `t.row_col.f1`: Calls of `dot` down the ROW type, or None when
        the name is a plain (qualified) column."""
        if len(parts) < 2:
            return None
        if parts[0] in self.qualifiers and len(parts) == 2:
            return None
        if parts[0] in self.qualifiers:
            base = [c for c in self.columns if c.qualifier == parts[0] and c.name == parts[1]]
            rest = parts[2:]
        else:
            base = [c for c in self.columns if c.name == parts[0] and not c.qualified_only]
            rest = parts[1:]
        if len(base) != 1 or base[0].type.name not in ("ROW", "STRUCTURED"):
            return None
        expr: Expr = InputRef(base[0].index, base[0].type)
        t = base[0].type
        for fname in rest:
            if t.name not in ("ROW", "STRUCTURED"):
                raise error(SqlValidationError, f"Column '{fname}' not found: {t} has no fields", node, self.sql)
            if fname not in t.field_names:
                raise _with_hint(
                    error(SqlValidationError, f"Column '{fname}' not found in {t}", node, self.sql),
                    did_you_mean(fname, list(t.field_names)),
                )
            ft = t.children[t.field_names.index(fname)]
            ft = ft.with_nullable(ft.nullable or t.nullable)
            expr = Call("dot", (expr, Literal(fname, STRING(nullable=False))), ft)
            t = ft
        return expr

    def star(self, qualifier: str | None, node: exp.Expression) -> list[ScopeColumn]:
        """Columns of `*` or `qualifier.*`."""
        if qualifier is None:
            return [c for c in self.columns if not c.qualified_only]
        cols = [c for c in self.columns if c.qualifier == qualifier]
        if not cols:
            raise error(SqlValidationError, f"Unknown identifier '{qualifier}'", node, self.sql)
        return cols


def _with_hint(err: SqlError, hint: str | None) -> SqlError:
    if hint:
        err.hint = hint
    return err


def uniquify(names: list[str]) -> list[str]:
    """Make output names unique as Calcite does: a repeated `k` becomes `k0`, `k1`, ..."""
    out: list[str] = []
    seen: set[str] = set()
    for n in names:
        cand = n
        i = 0
        while cand in seen:
            cand = f"{n}{i}"
            i += 1
        seen.add(cand)
        out.append(cand)
    return out
