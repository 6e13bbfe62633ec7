"""Values: an inline table (a bounded source with no input)."""

from __future__ import annotations

import pyarrow as pa

from runtime.expr.ir import Literal
from runtime.graph import Node
from runtime.operators._common import eval_context, make_batch
from runtime.operators.base import Operator, OperatorContext, Output, register_operator


@register_operator("Values")
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
        from runtime.expr.evaluator import evaluate, literal_value_to_py

        rows = self.node.params.get("rows") or []
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
