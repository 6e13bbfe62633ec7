"""Correlate: each input row joined with the rows a function of it produces (UNNEST of a
collection, or a Python table function); Flink's StreamExecCorrelate.

UNNEST is vectorized: the collection column's offsets give every element's parent row
(`np.repeat` over the lengths), elements are gathered with one Arrow `take`, ordinality
is the position within the parent. A Python UDTF is called once per input row (Python
semantics: it yields rows); that loop is inherent to the UDF and documented in docs/udf.md.
Output rows keep their input row's `__op` / `__wm`, so a changelog passes through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.batch import data_columns, data_width
from runtime.errors import JobError, user_code
from runtime.expr.evaluator import evaluate, evaluate_many
from runtime.expr.ir import Expr
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.map_values import python_column
from runtime.operators._common import eval_context, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr
from runtime.row import Row, arrow_value, python_values
from runtime.types import Field
from runtime.udf_registry import resolve

UNNEST = "unnest"
UDTF = "udtf"


@frozen_dataclass
class CorrelateFunction:
    """The function of each row: `kind` "unnest" (of `expr`, an ARRAY / MAP / MULTISET;
    `element` "scalar" / "row" / "map" / "multiset"; `ordinality` adds the position) or
    "udtf" (a Python table function: `udf` its reference, `name`, `args`, `func_type`)."""

    kind: str
    expr: Expr | None = None
    ordinality: bool = False
    element: str = "scalar"
    udf: str | None = None
    name: str = ""
    args: tuple[Expr, ...] = ()
    func_type: str | None = None


@frozen_dataclass
class CorrelateParams(OperatorParams):
    """Join each input row with the rows `function` produces; `join_type` INNER / LEFT."""

    function: CorrelateFunction
    join_type: str = "INNER"


def invocation(function: CorrelateFunction, names: list[str]) -> str:
    """`$UNNEST_ROWS$1($cor0.tags)` / `split($cor0.line)` as Flink prints invocations."""
    if function.kind == UNNEST:
        assert function.expr is not None
        return f"$UNNEST_ROWS$1({format_expr(function.expr, names)})"
    args = ", ".join(format_expr(a, names) for a in function.args)
    return f"{function.name}({args})"


def _collection_parts(arr: pa.Array, element: str) -> tuple[np.ndarray, np.ndarray, pa.Array]:
    """(lengths per row, absolute start offset per row, flat values) of a list/map column."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    if arr.null_count:
        lengths = np.where(np.asarray(arr.is_null().to_numpy(zero_copy_only=False)), 0, lengths)
    return lengths, offsets[:-1], arr.values


def _explode_multiset(arr: pa.Array) -> pa.Array:
    """MULTISET<T> (MAP<T, INT count>) as a list of T with each element repeated."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    rows = []
    for m in arr.to_pylist():  # rare type: per row, per distinct element
        rows.append(None if m is None else [k for k, c in m for _ in range(int(c or 0))])
    return pa.array(rows, type=pa.list_(arr.type.key_type))


class CorrelateOperator(Operator):
    # Row-at-a-time expansion (UNNEST / table functions): nothing is kept between batches
    # (Flink does not checkpoint a UDTF's own fields either).
    checkpointing = "stateless"

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        params = CorrelateParams.of(node)
        self.function = params.function
        self.left = params.join_type == "LEFT"
        self._udtf: Any = None

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        if data.num_rows == 0:
            return
        if self.function.kind == UNNEST:
            parent, func_cols = self._unnest(data)
        else:
            parent, func_cols = self._call_udtf(data)
        if not len(parent):
            return
        take = pa.array(parent, type=pa.int64())
        n_left = data.num_columns
        cols = [data.column(i).take(take) for i in range(n_left)] + func_cols
        extra = [batch.column(i).take(take) for i in range(data_width(batch), batch.num_columns)]
        names = batch.schema.names[data_width(batch) :]
        out_batch = make_batch(self.node, cols)
        if extra:
            out_batch = pa.RecordBatch.from_arrays(
                list(out_batch.columns) + extra, names=list(out_batch.schema.names) + list(names)
            )
        out.emit(out_batch)

    # ------------------------------------------------------------------ UNNEST
    def _unnest(self, data: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        assert self.function.expr is not None
        arr = evaluate(self.function.expr, data, eval_context(self.ctx, data.num_rows))
        element = self.function.element
        if element == "multiset":
            arr = _explode_multiset(arr)
        elif pa.types.is_map(arr.type if not isinstance(arr, pa.ChunkedArray) else arr.type):
            element = "map"
        lengths, starts, values = _collection_parts(arr, element)
        counts = np.maximum(lengths, 1) if self.left else lengths
        total = int(counts.sum())
        n = len(lengths)
        parent = np.repeat(np.arange(n, dtype=np.int64), counts)
        first_out = np.cumsum(counts) - counts
        within = np.arange(total, dtype=np.int64) - np.repeat(first_out, counts)
        empty = np.repeat(lengths == 0, counts)
        pos = np.repeat(starts, counts) + within
        idx = pa.array(pos, type=pa.int64(), mask=empty if empty.any() else None)
        elems = values.take(idx)
        if element == "row":
            cols = [pc.struct_field(elems, [i]) for i in range(elems.type.num_fields)]
        elif element == "map":
            cols = [pc.struct_field(elems, [0]), pc.struct_field(elems, [1])]
        else:
            cols = [elems]
        if self.function.ordinality:
            ordinal = pa.array((within + 1).astype(np.int32), type=pa.int32(), mask=empty if empty.any() else None)
            cols.append(ordinal)
        return parent, cols

    # ------------------------------------------------------------------ Python UDTF
    def _call_udtf(self, data: pa.RecordBatch) -> tuple[np.ndarray, list[pa.Array]]:
        if self._udtf is None:
            assert self.function.udf is not None
            self._udtf = resolve(self.function.udf).call_target()
        exprs = list(self.function.args)
        args = evaluate_many(exprs, data, eval_context(self.ctx, data.num_rows))
        py_args = [python_values(a, e.type) for a, e in zip(args, exprs, strict=True)]
        width = len(self.node.schema) - data.num_columns
        parent: list[int] = []
        rows: list[tuple[Any, ...]] = []
        n = data.num_rows
        with user_code(self.function.name or "table function", "on a row"):  # once per batch
            for i in range(n):  # a Python table function is called per input row
                produced = self._udtf(*(col[i] for col in py_args))
                got = 0
                for r in produced or ():
                    rows.append(_as_tuple(r, width))
                    parent.append(i)
                    got += 1
                if got == 0 and self.left:
                    rows.append((None,) * width)
                    parent.append(i)
        types = [f.type for f in self.node.schema[data.num_columns :]]
        try:
            cols = [
                pa.array(python_column([r[j] for r in rows], types[j]), type=types[j].to_arrow()) for j in range(width)
            ]
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:  # the function's values, not a streamsql bug
            raise JobError(
                f"Python function {self.function.name or 'table function'} produced values that are not "
                f"{', '.join(str(t) for t in types)}: {e}"
            ) from None
        return np.asarray(parent, dtype=np.int64), cols


def _as_tuple(r: Any, width: int) -> tuple[Any, ...]:
    if isinstance(r, (tuple, list, Row)):
        return tuple(arrow_value(v) for v in r)
    if width == 1:
        return (r,)
    raise JobError(f"A table function produced {r!r}; expected a row of {width} values")


def _row_type(fields: Sequence[Field]) -> str:
    return ", ".join(f"{f.type.with_nullable(True).as_time_attr(None)} {f.name}" for f in fields)


class CorrelateSpec(OperatorSpec[CorrelateParams]):
    """Stateless and row-wise: runs wherever its input is; output rows keep their input
    row's kind (streaming: forwards the changelog)."""

    name = "Correlate"
    forwards_update_before = True  # row-wise: each row keeps its kind
    params_type = CorrelateParams
    operator_class = CorrelateOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "CROSS JOIN UNNEST / LEFT JOIN UNNEST of an ARRAY or MAP (WITH ORDINALITY) → `posexplode[_outer]`, "
        "stateless. Python table functions (LATERAL TABLE) and MULTISETs run in the local runner only.",
    )

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        in_names = [f.name for f in node.inputs[0].fields]
        inv = invocation(p.function, [f"$cor0.{n}" for n in in_names])
        return [
            f"invocation=[{inv}]",
            f"correlate=[table({inv})]",
            f"select=[{','.join(f.name for f in node.fields)}]",
            f"rowType=[RecordType({_row_type(node.fields)})]",
            f"joinType=[{p.join_type}]",
        ]


CORRELATE = register_spec(CorrelateSpec())
