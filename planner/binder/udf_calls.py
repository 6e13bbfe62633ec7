"""Calls of Python user-defined functions (see planner.functions_catalog).

A scalar UDF call binds to `Call("python_udf", (Literal(reference), *args), result_type)`:
the registry function `python_udf` (runtime.functions.python_udf) resolves the reference
and calls the function over whole columns (pandas/arrow) or per row (general). An
aggregate UDF becomes an AggCall named after the function whose params carry
`udf` = the reference and its arguments' types (runtime.udaf builds its accumulator).
"""

from __future__ import annotations

import json

from planner.binder.types import plain
from planner.functions_catalog import FunctionDef
from runtime.expr.ir import Call, Expr, Literal
from runtime.types import STRING, DataType


def coerce_args(args: list[Expr], input_types: tuple[DataType, ...] | None) -> list[Expr]:
    """Cast arguments to the declared `input_types` (when given and the arity fits)."""
    if not input_types or len(input_types) != len(args):
        return args
    out: list[Expr] = []
    for a, t in zip(args, input_types, strict=True):
        same = plain(a.type).with_nullable(True) == t.with_nullable(True)
        out.append(a if same else Call("cast", (a,), t.with_nullable(True)))
    return out


def scalar_udf_call(defn: FunctionDef, args: list[Expr]) -> Call:
    """The IR of a scalar UDF call."""
    assert defn.result_type is not None
    ref = Literal(defn.reference, STRING(nullable=False))
    return Call("python_udf", (ref, *coerce_args(args, defn.input_types)), defn.result_type.with_nullable(True))


def udaf_params(defn: FunctionDef, args: list[Expr]) -> tuple[tuple[str, object], ...]:
    """AggCall params of an aggregate UDF. `arg_types` (the arguments' types, as JSON) lets
    the runtime hand the function PyFlink's Python values: a MAP as a dict, a ROW as a Row
    (the Arrow layout alone does not tell a MAP from an ARRAY of ROWs)."""
    types = json.dumps([plain(a.type).to_json() for a in args])
    return (("udf", defn.reference), ("func_type", defn.func_type), ("arg_types", types))
