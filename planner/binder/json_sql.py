"""Binding of the SQL/JSON query syntax (JSON_VALUE, JSON_QUERY, IS JSON) to the canonical
calls of runtime.functions.json_functions (see its module docstring)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.datatypes import to_data_type
from runtime.expr.ir import Call, Expr, Literal
from runtime.types import BOOLEAN, CHAR, NULL, STRING

if TYPE_CHECKING:
    from planner.binder.expressions import ExprBinder


def _word(text: str) -> Literal:
    return Literal(text, CHAR(len(text), nullable=False))


def _behaviour(b: ExprBinder, value: exp.Expression | str | None) -> tuple[Literal, Expr]:
    """(mode literal, default expression) of an ON EMPTY / ON ERROR clause: sqlglot keeps
    a DEFAULT value as an expression and the other forms as text ('NULL ON EMPTY')."""
    null = Literal(None, NULL())
    if value is None:
        return _word("NULL"), null
    if isinstance(value, exp.Expression) and not isinstance(value, exp.Var):
        return _word("DEFAULT"), b.bind(value)
    word = str(value.name if isinstance(value, exp.Var) else value).split(" ON ")[0].strip().upper()
    mode = {"ERROR": "ERROR", "EMPTY ARRAY": "EMPTY_ARRAY", "EMPTY OBJECT": "EMPTY_OBJECT"}.get(word, "NULL")
    return _word(mode), null


def bind_json_value(b: ExprBinder, node: exp.JSONValue) -> Expr:
    cond = node.args.get("on_condition")
    on_empty, empty_default = _behaviour(b, cond.args.get("empty") if cond else None)
    on_error, error_default = _behaviour(b, cond.args.get("error") if cond else None)
    returning = node.args.get("returning")
    result = to_data_type(returning, node, b.sql).with_nullable(True) if returning is not None else STRING()
    args = [b.bind(node.this), b.bind(node.args["path"]), on_empty, empty_default, on_error, error_default]
    b.call("json_value", args, node)  # type check of the document and path
    return Call("json_value", tuple(args), result)


def bind_json_query(b: ExprBinder, node: exp.JSONExtract) -> Expr:
    option = node.args.get("option")
    words = str(option.name if isinstance(option, exp.Var) else option or "").upper().split()
    wrapper = "WITHOUT"
    if words and words[0] == "WITH":
        # WITH [UNCONDITIONAL] [ARRAY] WRAPPER is unconditional; only CONDITIONAL says otherwise
        wrapper = "CONDITIONAL" if "CONDITIONAL" in words else "UNCONDITIONAL"
    cond = node.args.get("on_condition")
    on_empty, _ = _behaviour(b, cond.args.get("empty") if cond else None)
    on_error, _ = _behaviour(b, cond.args.get("error") if cond else None)
    args = [b.bind(node.this), b.bind(node.expression), _word(wrapper), on_empty, on_error]
    out = b.call("json_query", args, node)
    returning = node.meta.get("returning")
    if returning is None:
        return out
    # RETURNING: STRING (the default) or ARRAY<STRING> (the selected array's elements,
    # scalars as their text), as Flink's JSON_QUERY offers
    result = to_data_type(returning, node, b.sql).with_nullable(True)
    element = result.children[0] if result.name == "ARRAY" else None
    if not (result.is_string or (element is not None and element.is_string)):
        raise b.err(
            f"JSON_QUERY returns STRING or ARRAY<STRING>, not {result}: RETURNING STRING or "
            "ARRAY<STRING>, and CAST the result",
            node,
        )
    assert isinstance(out, Call)
    return Call(out.name, out.args, result)


def bind_is_json(b: ExprBinder, node: exp.Is) -> Expr:
    kind = node.expression.this
    args: list[Expr] = [b.bind(node.this)]
    if kind:
        args.append(_word(str(kind).upper()))
    out = b.call("is_json", args, node)
    assert isinstance(out, Call)  # no folding rule applies to IS JSON
    return Call(out.name, out.args, BOOLEAN(nullable=False))
