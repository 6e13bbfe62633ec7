"""Values: an inline table (a bounded source with no input)."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from runtime.expr.evaluator import evaluate, literal_value_to_py
from runtime.expr.ir import Expr, Literal
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import OperatorParams, OperatorSpec, PlanView, SparkCapability, register_spec
from runtime.plan_text import format_expr, format_literal


@frozen_dataclass
class ValuesParams(OperatorParams):
    """The rows, each a tuple of constant expressions (literals, or constants the binder
    did not fold such as `-7`), one per output column."""

    rows: tuple[tuple[Expr, ...], ...]


class ValuesOperator(Operator):
    """Produces its rows once, on the first `poll` (the executor polls operators that
    have no inputs, like table scans)."""

    checkpointing = "generic"
    state_attributes = ("_done",)
    state_merge = {"_done": "any"}  # restore with another parallelism (checkpoint/rescale.py)

    bounded = True

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        self._done = False

    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        raise AssertionError("Values has no input")

    def build(self) -> pa.RecordBatch:
        rows = ValuesParams.of(self.node).rows
        width = len(self.node.schema)
        # A one-row batch to evaluate constant expressions over (their value ignores it).
        unit = pa.RecordBatch.from_arrays([pa.nulls(1, pa.int8())], names=["_"])
        columns: list[list[object]] = [[] for _ in range(width)]
        for row in rows:
            for j, e in enumerate(row):
                if isinstance(e, Literal):
                    v = literal_value_to_py(e.value, e.type)
                else:  # a constant expression the binder did not fold (e.g. -7, CAST(NULL AS INT))
                    v = evaluate(e, unit, eval_context(self.ctx, 1))[0].as_py()
                columns[j].append(v)
        arrays = []
        for j, f in enumerate(self.node.schema):
            t = f.type.to_arrow()
            try:
                arrays.append(pa.array(columns[j], type=t))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
                arrays.append(pa.array(columns[j]).cast(t))
        return make_batch(self.node, arrays)

    def poll(self, max_rows: int) -> pa.RecordBatch | None:
        if self._done:
            return None
        self._done = True
        return self.build()


class ValuesSpec(OperatorSpec[ValuesParams]):
    """A bounded, insert-only source; at parallelism > 1 only subtask 0 emits the rows."""

    name = "Values"
    params_type = ValuesParams
    operator_class = ValuesOperator
    parallel = True
    rescalable = True
    spark = SparkCapability(
        True,
        True,
        "Built on the driver; a streaming job whose only sources are VALUES runs as a batch job; "
        "next to a streaming source the rows are written once to a parquet file read as a stream.",
    )

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I"

    def explain(self, node: PlanView) -> list[str]:
        rows = ", ".join("{ " + ", ".join(_literal_text(v) for v in r) + " }" for r in self.params(node).rows)
        return [f"tuples=[[{rows}]]", f"values=[{', '.join(f.name for f in node.fields)}]"]


def _literal_text(e: Expr) -> str:
    return format_literal(e) if isinstance(e, Literal) else format_expr(e, None)


VALUES = register_spec(ValuesSpec())
