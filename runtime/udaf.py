"""Accumulators of Python aggregate UDFs (GROUP BY and window aggregates).

`create_accumulator` (runtime.aggregates.factory) hands AggCalls whose params carry
`udf` (a runtime.udf_registry reference) to `create_udaf_accumulator`:

- func_type "general": a PyFlink AggregateFunction object: `create_accumulator()`,
  `accumulate(acc, *args)`, `get_value(acc)`, optional `retract(acc, *args)` (needed when
  the input retracts). One Python accumulator per key; folding calls accumulate/retract
  per input row (a Python call per row, inherent to this kind of UDF).
- func_type "pandas": a function over each group's values as pandas Series (vectorized
  per group); the accumulator keeps the group's argument rows (a multiset, so retraction
  removes one equal row) and calls the function when results are read.
State pickles without the function (it is resolved again from the reference).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyarrow as pa

from runtime.aggregates.accumulators import Accumulator
from runtime.checkpoint.format import register_state_type
from runtime.data_view import ListView, MapView
from runtime.errors import JobError, user_code
from runtime.map_values import python_column
from runtime.pandas_interop import import_pandas, pandas_argument
from runtime.plan_params import AggCallParams
from runtime.row import Row, RowKind, arrow_value, python_values
from runtime.types import DataType
from runtime.udf_registry import UdfSpec, implements, resolve

# What a general UDAF's accumulator may hold besides plain data (lists, dicts, tuples,
# numbers, strings, ...): PyFlink's Row (with its RowKind) and DataViews. Registered as
# state types, a checkpoint writes them field by field and a restore rebuilds them.
register_state_type(Row, fields=Row.STATE_FIELDS)
for _state_type in (RowKind, ListView, MapView):
    register_state_type(_state_type)


class _UdafBase(Accumulator):
    def __init__(self, call: AggCallParams, arg_types: list[pa.DataType]) -> None:
        super().__init__(arg_types, call.type)
        self.reference: str = call.params["udf"]
        self.params = call.params
        self._arg_types: list[DataType] | None = None
        self.name = call.name
        self._spec: UdfSpec | None = None
        self.state: list[Any] = []

    @property
    def spec(self) -> UdfSpec:
        if self._spec is None:
            self._spec = resolve(self.reference)
        return self._spec

    def grow(self, n: int) -> None:
        super().grow(n)
        if len(self.state) < n:
            self.state.extend([None] * (n - len(self.state)))

    def reset(self, slots: np.ndarray) -> None:
        for s in slots:
            self.state[int(s)] = None

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["_spec"] = None
        d["_arg_types"] = None  # parsed again from params
        return d

    def _python_args(self, args: list[pa.Array]) -> list[list[Any]]:
        """The argument columns as the Python values PyFlink passes: a MAP as a dict and a
        ROW as a Row, at any depth (runtime.row.python_values), by the argument types the
        planner recorded (a plan without them gives Arrow's values)."""
        types = getattr(self, "_arg_types", None)  # absent in an accumulator restored from an older state
        if types is None:
            recorded = getattr(self, "params", {}).get("arg_types")
            types = self._arg_types = [DataType.from_json(t) for t in json.loads(recorded)] if recorded else []
        if len(types) != len(args):
            return [a.to_pylist() for a in args]
        return [python_values(a, t) for a, t in zip(args, types, strict=True)]

    def _result_array(self, values: list[Any]) -> pa.Array:
        try:
            converted = python_column([arrow_value(v) for v in values], self.result_type)
            return pa.array(converted, type=self.arrow_type, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise JobError(
                f"Aggregate function {self.name} returned a value that is not {self.result_type}: {e}"
            ) from None


class GeneralUdafAcc(_UdafBase):
    """PyFlink-style AggregateFunction: per-key accumulator objects."""

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        fn = self.spec.func
        retract = fn.retract if implements(fn, "retract") else None
        cols = self._python_args(args)
        with user_code(self.name, "on a row"):  # once per batch: the user's code raising fails the job
            for i, (slot, sign) in enumerate(zip(slots.tolist(), signs.tolist(), strict=True)):  # per row: Python UDAF
                acc = self.state[slot]
                if acc is None:
                    acc = self.state[slot] = fn.create_accumulator()
                row = [c[i] for c in cols]
                if sign > 0:
                    fn.accumulate(acc, *row)
                elif retract is None:
                    raise JobError(
                        f"Aggregate function {self.name} does not implement retract(), which this (updating) input needs"
                    )
                else:
                    retract(acc, *row)

    def results(self, slots: np.ndarray) -> pa.Array:
        fn = self.spec.func
        out = []
        with user_code(self.name, "computing a result"):
            for s in slots.tolist():
                acc = self.state[s]
                out.append(fn.get_value(acc if acc is not None else fn.create_accumulator()))
        return self._result_array(out)


class PandasUdafAcc(_UdafBase):
    """Vectorized UDAF: the function gets each group's argument columns as Series."""

    def update(self, slots: np.ndarray, signs: np.ndarray, args: list[pa.Array]) -> None:
        cols = self._python_args(args)
        for i, (slot, sign) in enumerate(zip(slots.tolist(), signs.tolist(), strict=True)):
            rows = self.state[slot]
            if rows is None:
                rows = self.state[slot] = []
            row = tuple(c[i] for c in cols)
            if sign > 0:
                rows.append(row)
            elif row in rows:
                rows.remove(row)

    def results(self, slots: np.ndarray) -> pa.Array:
        pd = import_pandas()  # pandas UDAF: the session's pandas guard ends (runtime/pandas_interop.py)

        fn = self.spec.func
        call = _pandas_aggregate_call(fn) if implements(fn, "accumulate") else self.spec.call_target()
        types = self._argument_types()
        out = []
        with user_code(self.name, "on a group"):
            for s in slots.tolist():  # one vectorized call per group
                rows = self.state[s] or []
                series = [_group_column(pd, [r[j] for r in rows], types[j]) for j in range(len(self.arg_types))]
                out.append(call(*series))
        return self._result_array(out)

    def _argument_types(self) -> list[DataType | None]:
        recorded = self.params.get("arg_types")
        types: list[DataType | None] = [DataType.from_json(t) for t in json.loads(recorded)] if recorded else []
        return types if len(types) == len(self.arg_types) else [None] * len(self.arg_types)


def _group_column(pd: Any, values: list[Any], data_type: DataType | None) -> Any:
    """A group's values of one argument as PyFlink's pandas aggregate functions get them: a
    Series, and for a ROW (the whole row of a bare function in `aggregate`) a DataFrame with
    a column per field."""
    if data_type is not None and data_type.name == "ROW":
        columns = list(data_type.field_names)
        frame = pd.DataFrame([tuple(v) if v is not None else (None,) * len(columns) for v in values], columns=columns)
        return frame.infer_objects()
    return pd.Series(values, dtype=object).infer_objects()


def _pandas_aggregate_call(fn: Any) -> Any:
    """An AggregateFunction given to `udaf(..., func_type="pandas")`: PyFlink calls
    `accumulate(acc, *series)` once with the group's columns, then `get_value(acc)`."""

    def call(*series: Any) -> Any:
        acc = fn.create_accumulator()
        fn.accumulate(acc, *series)
        return fn.get_value(acc)

    return call


def frame_aggregate(call: AggCallParams, args: list[pa.Array], lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """A Python aggregate function in an OVER window: for each row i, the function over the
    rows lo[i]..hi[i] (inclusive) of `args` (the arguments in partition-then-order
    sequence). A pandas function gets the frame's columns as Series (a ROW as a DataFrame),
    a general one accumulates the frame's rows. Rows with the same frame share one call (an
    unbounded frame is one call per partition)."""
    acc = create_udaf_accumulator(call, [a.type for a in args], retract=False)
    assert isinstance(acc, _UdafBase)
    spec, name = acc.spec, acc.name
    fn = spec.func
    out: list[Any] = []
    done: dict[tuple[int, int], Any] = {}
    if spec.func_type == "pandas":
        call_fn = _pandas_aggregate_call(fn) if implements(fn, "accumulate") else spec.call_target()
        with user_code(name, "on a window frame"):
            for a, b in zip(lo.tolist(), hi.tolist(), strict=True):  # one vectorized call per distinct frame
                if (a, b) not in done:
                    done[(a, b)] = call_fn(*(pandas_argument(c.slice(a, b - a + 1)) for c in args))
                out.append(done[(a, b)])
        return acc._result_array(out)
    cols = acc._python_args(args)
    with user_code(name, "on a window frame"):
        for a, b in zip(lo.tolist(), hi.tolist(), strict=True):  # per frame: a Python AggregateFunction
            if (a, b) not in done:
                state = fn.create_accumulator()
                for r in range(a, b + 1):
                    fn.accumulate(state, *(c[r] for c in cols))
                done[(a, b)] = fn.get_value(state)
            out.append(done[(a, b)])
    return acc._result_array(out)


def create_udaf_accumulator(call: AggCallParams, arg_types: list[pa.DataType], retract: bool) -> Accumulator:
    params = call.params
    if params.get("func_type") == "pandas":
        return PandasUdafAcc(call, arg_types)
    acc = GeneralUdafAcc(call, arg_types)
    if retract and not implements(acc.spec.func, "retract"):
        acc.retractable = False
    return acc
