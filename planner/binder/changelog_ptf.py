"""Binding the built-in changelog process table functions in FROM:
`TO_CHANGELOG(input => TABLE t [, op => DESCRIPTOR(col)] [, op_mapping => MAP[...]])` and
`FROM_CHANGELOG(...)` with the same arguments, by name or by position, with or without the
`TABLE(...)` wrapper. The validation and its messages follow Flink 2.3's type strategies
(ToChangelogTypeStrategy / FromChangelogTypeStrategy); the semantics are documented in
runtime/operators/process_table_function.py and docs/sql.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from planner.binder.query import bind_relation
from planner.binder.scope import error
from planner.dialect.ast import Descriptor, TableArgument, TableFunction
from planner.errors import SqlValidationError
from planner.logical import LogicalNode
from runtime.types import STRING, Field

if TYPE_CHECKING:
    from planner.binder.query import BindContext

_TO_EXAMPLE = "change operations to one code (e.g., MAP['INSERT, UPDATE_AFTER', 'U'])"
_FROM_EXAMPLE = "codes to the same operation (e.g., MAP['c, r', 'INSERT'])"


def is_changelog_function(name: str) -> bool:
    from runtime.operators.process_table_function import CHANGELOG_FUNCTIONS  # start-up

    return name.upper() in CHANGELOG_FUNCTIONS


def _arguments(ctx: BindContext, node: TableFunction, function: str) -> dict[str, exp.Expression]:
    """The call's arguments by declared name (positional ones first, then `name => value`)."""
    from runtime.operators.process_table_function import CHANGELOG_FUNCTIONS  # start-up

    declared = CHANGELOG_FUNCTIONS[function]
    args: dict[str, exp.Expression] = {}
    positional = True
    for i, a in enumerate(node.expressions):
        if isinstance(a, exp.Kwarg):
            positional = False
            key = a.this.name.lower()
            if key not in declared:
                raise error(
                    SqlValidationError,
                    f"Unknown argument '{a.this.name}' of function {function}. "
                    f"Its arguments are: {', '.join(declared)}.",
                    a,
                    ctx.sql,
                )
            if key in args:
                raise error(SqlValidationError, f"Argument '{key}' of {function} is given twice.", a, ctx.sql)
            if not _is_default(a.expression):
                args[key] = a.expression
        elif not positional:
            raise error(
                SqlValidationError, "A positional argument cannot follow a named argument (name => value).", a, ctx.sql
            )
        elif i >= len(declared):
            raise error(
                SqlValidationError,
                f"Too many arguments for {function}: it takes {', '.join(declared)}.",
                a,
                ctx.sql,
            )
        elif not _is_default(a):
            args[declared[i]] = a
    return args


def _is_default(node: exp.Expression) -> bool:
    """The `DEFAULT` keyword: an argument left at its default (as if not given)."""
    return (
        isinstance(node, exp.Column) and not node.table and node.this.name.upper() == "DEFAULT" and not node.this.quoted
    )


def _op_column(ctx: BindContext, arg: exp.Expression | None) -> tuple[str, str]:
    """The op column's name (`op` by default) and the argument's EXPLAIN text."""
    from runtime.operators.process_table_function import (  # start-up
        DEFAULT_OP_COLUMN,
        descriptor_argument_text,
    )

    if arg is None:
        return DEFAULT_OP_COLUMN, "DEFAULT()"
    if not isinstance(arg, Descriptor) or len(arg.expressions) != 1:
        raise error(
            SqlValidationError, "The descriptor for argument 'op' must contain exactly one column name.", arg, ctx.sql
        )
    name = arg.expressions[0].name
    return name, descriptor_argument_text(name)


def _op_mapping(ctx: BindContext, arg: exp.Expression | None) -> list[tuple[str, str]] | None:
    """The MAP literal's entries as written (keys, values), or None when not given."""
    if arg is None:
        return None
    keys = arg.args.get("keys") if isinstance(arg, exp.VarMap) else None
    values = arg.args.get("values") if isinstance(arg, exp.VarMap) else None
    entries: list[tuple[str, str]] = []
    if isinstance(keys, exp.Array) and isinstance(values, exp.Array):
        for k, v in zip(keys.expressions, values.expressions, strict=True):
            if not (isinstance(k, exp.Literal) and k.is_string and isinstance(v, exp.Literal) and v.is_string):
                entries = []
                break
            entries.append((k.this, v.this))
    if not entries:
        raise error(SqlValidationError, "The 'op_mapping' argument must be a constant MAP literal.", arg, ctx.sql)
    return entries


def _kind_name(ctx: BindContext, name: str, seen: set[str], arg: exp.Expression, example: str) -> str:
    from runtime.operators.process_table_function import ROW_KIND_BY_NAME  # start-up

    kind = name.strip()
    if kind not in ROW_KIND_BY_NAME:
        raise error(
            SqlValidationError,
            f"Invalid target mapping for argument 'op_mapping'. Unknown change operation: '{kind}'. "
            f"Valid values are: [{', '.join(ROW_KIND_BY_NAME)}].",
            arg,
            ctx.sql,
        )
    if kind in seen:
        raise error(
            SqlValidationError,
            f"Invalid target mapping for argument 'op_mapping'. Duplicate change operation: '{kind}'. "
            f"Use comma-separated keys to map several {example}.",
            arg,
            ctx.sql,
        )
    seen.add(kind)
    return kind


def _to_mapping(ctx: BindContext, entries: list[tuple[str, str]], arg: exp.Expression) -> tuple[tuple[str, str], ...]:
    """TO_CHANGELOG: keys are (comma-separated) row kind names, values the codes."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for key, code in entries:
        for name in key.split(","):
            out.append((_kind_name(ctx, name, seen, arg, _TO_EXAMPLE), code))
    return tuple(out)


def _from_mapping(ctx: BindContext, entries: list[tuple[str, str]], arg: exp.Expression) -> tuple[tuple[str, str], ...]:
    """FROM_CHANGELOG: keys are (comma-separated) codes, values the row kind names."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    codes: set[str] = set()
    for key, value in entries:
        kind = _kind_name(ctx, value, seen, arg, _FROM_EXAMPLE)
        for code in key.split(","):
            code = code.strip()
            if code in codes:
                raise error(
                    SqlValidationError,
                    f"Invalid mapping for argument 'op_mapping'. The code '{code}' is mapped twice.",
                    arg,
                    ctx.sql,
                )
            codes.add(code)
            out.append((kind, code))
    return tuple(out)


def bind_changelog_function(ctx: BindContext, node: TableFunction) -> LogicalNode:
    """The logical plan of a TO_CHANGELOG / FROM_CHANGELOG call."""
    from planner.rules.changelog_ptf import LogicalChangelogFunction  # start-up
    from runtime.operators.process_table_function import (  # start-up
        DEFAULT_MAPPING,
        FROM_CHANGELOG,
        TO_CHANGELOG,
        ProcessTableFunctionParams,
        map_argument_text,
    )

    function = node.name.upper()
    args = _arguments(ctx, node, function)
    table = args.get("input")
    if not isinstance(table, TableArgument):
        raise error(SqlValidationError, f"First argument must be a table for {function}.", table or node, ctx.sql)
    if table.args.get("partition_by"):
        raise error(
            SqlValidationError,
            "Only tables with set semantics may be partitioned. Invalid PARTITION BY clause in the 0-th operand "
            f"of table function '{function}'",
            table.args["partition_by"][0],
            ctx.sql,
        )
    input_plan = bind_relation(ctx, table.this)
    fields = input_plan.fields
    op_name, op_text = _op_column(ctx, args.get("op"))
    mapping_arg = args.get("op_mapping")
    entries = _op_mapping(ctx, mapping_arg)
    map_text = "DEFAULT()" if entries is None else map_argument_text(entries)
    if function == TO_CHANGELOG:
        mapping = DEFAULT_MAPPING if entries is None else _to_mapping(ctx, entries, mapping_arg or node)
        out_fields = (Field(op_name, STRING()), *fields)
        params = ProcessTableFunctionParams(TO_CHANGELOG, 0, mapping, (op_text, map_text))
        return LogicalChangelogFunction(fields=out_fields, input=input_plan, params=params)
    names = [f.name for f in fields]
    if op_name not in names:
        raise error(
            SqlValidationError,
            f"The op column '{op_name}' does not exist in the input schema.",
            args.get("op") or node,
            ctx.sql,
        )
    op_index = names.index(op_name)
    op_type = fields[op_index].type
    if not op_type.is_string:
        raise error(
            SqlValidationError,
            f"The op column '{op_name}' must be of STRING type, but was '{op_type}'.",
            args.get("op") or node,
            ctx.sql,
        )
    mapping = DEFAULT_MAPPING if entries is None else _from_mapping(ctx, entries, mapping_arg or node)
    out_fields = tuple(f for i, f in enumerate(fields) if i != op_index)
    params = ProcessTableFunctionParams(FROM_CHANGELOG, op_index, mapping, (op_text, map_text))
    return LogicalChangelogFunction(fields=out_fields, input=input_plan, params=params)
