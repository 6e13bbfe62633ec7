"""Small helpers for unit tests of scalar functions: build a batch from typed columns,
evaluate IR over it and render the result as the SQL client would print it.

Lives in the package (not under tests/) so every function module's tests can import it
without relying on test-path tricks.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from runtime.expr.evaluator import evaluate
from runtime.expr.ir import Call, Expr, InputRef, Literal
from runtime.functions.registry import EvalContext, lookup
from runtime.render import render_column
from runtime.types import DataType


def batch_of(columns: list[tuple[list[Any], DataType]]) -> pa.RecordBatch:
    """A RecordBatch with one column per (python values, type)."""
    arrays = [pa.array(vals, type=t.to_arrow()) for vals, t in columns]
    return pa.RecordBatch.from_arrays(arrays, names=[f"c{i}" for i in range(len(arrays))])


def refs(columns: list[tuple[list[Any], DataType]]) -> list[InputRef]:
    return [InputRef(i, t) for i, (_, t) in enumerate(columns)]


def call(name: str, *args: Expr, type: DataType | None = None) -> Call:  # noqa: A002 - mirrors Call.type
    """A Call whose type is inferred through the registry unless given."""
    if type is None:
        fn = lookup(name)
        assert fn is not None, name
        type = fn.infer([a.type for a in args])
    return Call(name, tuple(args), type)


def lit(value: Any, t: DataType) -> Literal:
    return Literal(value, t)


def run(expr: Expr, columns: list[tuple[list[Any], DataType]], time_zone: str = "UTC") -> list[str | None]:
    """Evaluate `expr` over the columns and render each row."""
    batch = batch_of(columns)
    out = evaluate(expr, batch, EvalContext(batch.num_rows, time_zone=time_zone))
    assert len(out) == batch.num_rows
    assert out.type == expr.type.to_arrow(), (out.type, expr.type)
    return render_column(out, expr.type, time_zone)
