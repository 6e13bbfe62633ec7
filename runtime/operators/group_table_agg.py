"""GroupTableAggregate: the Table API's `flat_aggregate` with a Python table aggregate
function (PyFlink's `udtaf`; Flink's StreamExecGroupTableAggregate).

Params (plain data, set by planner.rules.table_aggregate):
- `grouping`: input columns of the key (empty: one global group),
- `args`: input columns passed to `accumulate` / `retract`,
- `row_arg`: pass the `args` columns as one Row argument (`flat_aggregate(top2)` without a
  call: the whole input row, as PyFlink does) instead of one argument per column,
- `input_names`: field names of that Row,
- `function`: `{"udf": <runtime.udf_registry reference>, "name": str}`.
Output: the key columns, then the columns of the rows `emit_value(acc)` yields.

Streaming (Flink's GroupTableAggFunction): after each input batch, every key it touched
retracts the rows it emitted before (-D) and emits the rows `emit_value` yields now (+I);
a key whose row count drops to zero only retracts and is removed. One change set per key
per batch (like mini-batch); the final table equals per-record processing. Batch: the
rows of every key at end of input.

The function is Python code called per input row (`accumulate`) and per touched key
(`emit_value`): those loops are inherent to this kind of UDF; key slots come from the
vectorized state backend and output columns are built with one `pa.array` per column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.batch import DELETE, INSERT, UPDATE_BEFORE, data_columns, row_kinds
from runtime.distinct import sorted_distinct_first
from runtime.errors import JobError, user_code
from runtime.frozen import frozen_dataclass
from runtime.graph import Node
from runtime.map_values import python_column
from runtime.operators._common import make_batch
from runtime.operators.base import Operator, OperatorContext, Output
from runtime.operators.spec import KEYED, OperatorParams, OperatorSpec, PlanView, register_spec
from runtime.row import Row, arrow_value, python_values
from runtime.state import KeyedStateBackend, create_backend
from runtime.types import DataType
from runtime.udf_registry import UdfSpec, implements, resolve


def as_values(r: Any, width: int, name: str) -> tuple[Any, ...]:
    """One row yielded by `emit_value` as a tuple of `width` values."""
    if isinstance(r, (tuple, list, Row)):
        values = tuple(arrow_value(v) for v in r)
    elif width == 1:
        values = (r,)
    else:
        raise JobError(f"Table aggregate function {name} emitted {r!r}; expected a row of {width} values")
    if len(values) != width:
        raise JobError(f"Table aggregate function {name} emitted a row of {len(values)} values; expected {width}")
    return values


@frozen_dataclass
class TableAggregateFunction:
    """A Python table aggregate function: `udf` its reference (runtime/udf_registry.py)."""

    udf: str
    name: str = "table aggregate"


@frozen_dataclass
class GroupTableAggregateParams(OperatorParams):
    """GROUP BY `grouping`, calling `function` with input columns `args` (or, `row_arg`,
    the whole row as a Row with field names `input_names`)."""

    grouping: tuple[int, ...]
    args: tuple[int, ...]
    function: TableAggregateFunction
    row_arg: bool = False
    input_names: tuple[str, ...] = ()
    # The argument columns' types: the function gets PyFlink's Python values (a MAP as a
    # dict, a ROW as a Row); empty in a plan from before they were recorded.
    arg_types: tuple[DataType, ...] = ()


def call_text(function: TableAggregateFunction, args: Sequence[int], row_arg: bool, names: Sequence[str]) -> str:
    """`top2(v)` / `top2(*)` as EXPLAIN shows the call."""
    if row_arg:
        return f"{function.name}(*)"
    return f"{function.name}({', '.join(names[i] for i in args)})"


class GroupTableAggregateOperator(Operator):
    """Keyed Python table aggregation with a retract (-D / +I) changelog output."""

    checkpointing = "generic"
    state_attributes = ("accs", "counts", "emitted")
    state_merge = {"accs": "slot_dict", "counts": "slot_dict", "emitted": "slot_dict"}  # rescale.py

    def __init__(self, node: Node, ctx: OperatorContext) -> None:
        super().__init__(node, ctx)
        p = GroupTableAggregateParams.of(node)
        self.grouping: list[int] = list(p.grouping)
        self.args: list[int] = list(p.args)
        self.row_arg: bool = p.row_arg
        self.input_names: tuple[str, ...] = p.input_names
        self.arg_types: tuple[DataType, ...] = p.arg_types
        self.function = p.function
        self.state: KeyedStateBackend = ctx.state if ctx.state is not None else create_backend(ctx.config)
        self.accs: dict[int, Any] = {}
        self.counts: dict[int, int] = {}
        self.emitted: dict[int, list[tuple[Any, ...]]] = {}
        self._spec: UdfSpec | None = None

    @property
    def spec(self) -> UdfSpec:
        if self._spec is None:
            self._spec = resolve(self.function.udf)
        return self._spec

    @property
    def name(self) -> str:
        return self.function.name or "table aggregate"

    # ------------------------------------------------------------------ processing
    def process_batch(self, batch: pa.RecordBatch, input_index: int, out: Output) -> None:
        data = data_columns(batch)
        n = data.num_rows
        if n == 0:
            return
        signs = np.where(np.isin(row_kinds(batch), [UPDATE_BEFORE, DELETE]), -1, 1)  # -U / -D retract
        slots = self.state.lookup([data.column(i) for i in self.grouping], n)
        self._fold(data, slots, signs)
        if self.ctx.is_batch:
            return
        uniq, first = sorted_distinct_first(slots)
        order = np.argsort(first, kind="stable")
        touched, first = uniq[order], first[order]
        key_rows: list[int] = []
        kinds: list[int] = []
        values: list[tuple[Any, ...]] = []
        dead: list[int] = []
        for slot, row in zip(touched.tolist(), first.tolist(), strict=True):  # per touched key
            for v in self.emitted.pop(slot, []):
                key_rows.append(row)
                kinds.append(DELETE)
                values.append(v)
            if self.counts.get(slot, 0) <= 0:
                dead.append(slot)
                continue
            new = self._emit(slot)
            self.emitted[slot] = new
            key_rows.extend([row] * len(new))
            kinds.extend([INSERT] * len(new))
            values.extend(new)
        if dead:
            for s in dead:
                self.accs.pop(s, None)
                self.counts.pop(s, None)
            self.state.remove(np.asarray(dead, dtype=np.int64))
        if values:
            idx = pa.array(key_rows, pa.int64())
            keys = [data.column(i).take(idx) for i in self.grouping]
            out.emit(make_batch(self.node, keys + self._columns(values), np.asarray(kinds, dtype=np.int8)))

    def _fold(self, data: pa.RecordBatch, slots: np.ndarray, signs: np.ndarray) -> None:
        fn = self.spec.func
        retract = fn.retract if implements(fn, "retract") else None
        if len(self.arg_types) == len(self.args):
            cols = [python_values(data.column(i), t) for i, t in zip(self.args, self.arg_types, strict=True)]
        else:
            cols = [data.column(i).to_pylist() for i in self.args]
        arg_rows: Any = list(zip(*cols, strict=True)) if cols else [()] * data.num_rows
        if self.row_arg:
            names = self.input_names or tuple(data.schema.names[i] for i in self.args)
            arg_rows = [(Row.of(r, names),) for r in arg_rows]
        with user_code(self.name, "on a row"):  # once per batch: the user's code raising fails the job
            for slot, sign, args in zip(slots.tolist(), signs.tolist(), arg_rows, strict=True):  # per row: Python UDF
                acc = self.accs.get(slot)
                if acc is None:
                    acc = self.accs[slot] = fn.create_accumulator()
                if sign > 0:
                    fn.accumulate(acc, *args)
                elif retract is None:
                    raise JobError(
                        f"Table aggregate function {self.name} does not implement retract(), "
                        "which this (updating) input needs"
                    )
                else:
                    retract(acc, *args)
                self.counts[slot] = self.counts.get(slot, 0) + sign

    def _emit(self, slot: int) -> list[tuple[Any, ...]]:
        width = len(self.node.schema) - len(self.grouping)
        with user_code(self.name, "emitting a result"):  # per key, as emit_value is called
            produced = list(self.spec.func.emit_value(self.accs[slot]) or ())  # a generator runs here
        return [as_values(r, width, self.name) for r in produced]

    def _columns(self, values: list[tuple[Any, ...]]) -> list[pa.Array]:
        out = []
        for j, f in enumerate(self.node.schema[len(self.grouping) :]):
            try:
                column = python_column([v[j] for v in values], f.type)
                out.append(pa.array(column, type=f.type.to_arrow(), from_pandas=True))
            except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
                raise JobError(
                    f"Table aggregate function {self.name} emitted a value that is not {f.type}: {e}"
                ) from None
        return out

    def end_input(self, input_index: int, out: Output) -> None:
        if not self.ctx.is_batch:
            return
        slots = [s for s in self.state.live_slots().tolist() if self.counts.get(s, 0) > 0]
        if not slots:
            return
        types = [self.node.schema[j].type.to_arrow() for j in range(len(self.grouping))]
        keys = self.state.key_arrays(np.asarray(slots, dtype=np.int64), types)
        key_rows: list[int] = []
        values: list[tuple[Any, ...]] = []
        for i, s in enumerate(slots):  # per key
            rows = self._emit(s)
            key_rows.extend([i] * len(rows))
            values.extend(rows)
        if not values:
            return
        take = pa.array(key_rows, type=pa.int64())
        cols = [k.take(take) for k in keys]
        out.emit(make_batch(self.node, cols + self._columns(values), np.zeros(len(values), dtype=np.int8)))

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["_spec"] = None
        return d


class GroupTableAggregateSpec(OperatorSpec[GroupTableAggregateParams]):
    """Keyed by the grouping columns; emits a retract (-D / +I) changelog."""

    name = "GroupTableAggregate"
    params_type = GroupTableAggregateParams
    operator_class = GroupTableAggregateOperator
    input_distribution = KEYED
    rescalable = True

    def input_keys(self, params: GroupTableAggregateParams, input_index: int) -> tuple[int, ...]:
        return params.grouping

    def changelog_mode(self, node: PlanView, inputs: Sequence[PlanView]) -> str:
        return "I,D"

    def explain(self, node: PlanView) -> list[str]:
        p = self.params(node)
        names = [f.name for f in node.inputs[0].fields]
        keys = ", ".join(names[i] for i in p.grouping)
        call = call_text(p.function, p.args, p.row_arg, names)
        return [f"groupBy=[{keys}]", f"select=[{keys + ', ' if keys else ''}{call}]"]


GROUP_TABLE_AGGREGATE = register_spec(GroupTableAggregateSpec())
