"""Python user-defined functions, shaped like PyFlink's `pyflink.table.udf`.

    from streamsql.udf import udf, udtf, udaf, DataTypes, AggregateFunction

    @udf(result_type=DataTypes.BIGINT())                       # per row (general)
    def add(i, j): return i + j

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")   # whole columns (vectorized)
    def add_vec(i, j): return i + j                            # pandas Series in, Series out

    @udtf(result_types=[DataTypes.STRING(), DataTypes.INT()])
    def split(s):
        for w in s.split(","): yield w, len(w)

    class WeightedAvg(AggregateFunction):
        def create_accumulator(self): return [0, 0]
        def accumulate(self, acc, v, w): acc[0] += v * w; acc[1] += w
        def retract(self, acc, v, w): acc[0] -= v * w; acc[1] -= w
        def get_value(self, acc): return None if acc[1] == 0 else acc[0] // acc[1]
    weighted_avg = udaf(WeightedAvg(), result_type=DataTypes.BIGINT())

    t_env.create_temporary_function("add", add)     # or: CREATE TEMPORARY FUNCTION add
                                                     #     AS 'my_pkg.my_module.add' LANGUAGE PYTHON

The decorators attach a `runtime.udf_registry.UdfSpec` to the returned wrapper; the
planner reads it to type calls and the runtime to call the function. See docs/udf.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from runtime.data_view import DataView, ListView, MapView
from runtime.types import DataType
from runtime.udf_registry import SPEC_ATTR, UNIMPLEMENTED, FunctionContext, UdfSpec
from streamsql.types import DataTypes

__all__ = [
    "AggregateFunction",
    "AsyncScalarFunction",
    "DataView",
    "FunctionContext",
    "ListView",
    "MapView",
    "DataTypes",
    "ScalarFunction",
    "TableAggregateFunction",
    "TableFunction",
    "UserDefinedFunctionWrapper",
    "udaf",
    "udf",
    "udtaf",
    "udtf",
]


class UserDefinedFunction:
    """Base of function classes: optional `open(function_context)` / `close()` hooks."""

    def open(self, function_context: FunctionContext) -> None:  # noqa: B027 - optional hook
        pass

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    def is_deterministic(self) -> bool:
        return True


class ScalarFunction(UserDefinedFunction):
    """Subclass and define `eval(self, *args)`, called per row with Python values."""

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError("a ScalarFunction defines eval(self, *args)")


class AsyncScalarFunction(UserDefinedFunction):
    """Subclass and define `async def eval(self, *args)`: the rows of a batch are awaited
    concurrently (at most `table.exec.async-scalar.max-concurrent-operations` at a time,
    each within `table.exec.async-scalar.timeout`, retried per
    `table.exec.async-scalar.retry-strategy`), and the results keep the input order."""

    async def eval(self, *args: Any) -> Any:
        raise NotImplementedError("an AsyncScalarFunction defines async def eval(self, *args)")


class TableFunction(UserDefinedFunction):
    """Subclass and define `eval(self, *args)` yielding rows (tuples / Row / values)."""

    def eval(self, *args: Any) -> Any:
        raise NotImplementedError("a TableFunction defines eval(self, *args)")


class ImperativeAggregateFunction(UserDefinedFunction):
    """What AggregateFunction and TableAggregateFunction share: the accumulator contract,
    and the result / accumulator types a function may declare itself."""

    def create_accumulator(self) -> Any:
        raise NotImplementedError

    def accumulate(self, accumulator: Any, *args: Any) -> None:
        raise NotImplementedError

    def retract(self, accumulator: Any, *args: Any) -> None:
        """Define it for updating inputs (the runtime checks whether a subclass does)."""
        raise NotImplementedError(f"{type(self).__name__} does not retract: it cannot consume an updating input")

    def merge(self, accumulator: Any, accumulators: list[Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not define merge()")

    setattr(retract, UNIMPLEMENTED, True)
    setattr(merge, UNIMPLEMENTED, True)

    def get_result_type(self) -> DataType | str | None:
        """The result type, when `udaf(...)` / `udtaf(...)` is given none."""
        return None

    def get_accumulator_type(self) -> DataType | str | None:
        return None


class AggregateFunction(ImperativeAggregateFunction):
    """Subclass and define `create_accumulator`, `accumulate(acc, *args)`, `get_value(acc)`
    and, for updating inputs, `retract(acc, *args)`."""

    def get_value(self, accumulator: Any) -> Any:
        raise NotImplementedError


class UserDefinedFunctionWrapper:
    """What the decorators return: callable like the function, carrying its UdfSpec."""

    def __init__(self, spec: UdfSpec) -> None:
        setattr(self, SPEC_ATTR, spec)
        target = spec.func
        if callable(target) and hasattr(target, "__name__"):
            functools.update_wrapper(self, target)
        else:  # an instance of a function class
            self.__name__ = spec.name or type(target).__name__
            self.__qualname__ = self.__name__
            self.__wrapped__ = target

    def __call__(self, *args: Any) -> Any:
        spec: UdfSpec = getattr(self, SPEC_ATTR)
        return spec.call_target()(*args)

    def alias(self, *alias_names: str) -> UserDefinedFunctionWrapper:
        """Names of the columns a table function (or a ROW result of map) produces."""
        self._alias_names = tuple(alias_names)
        return self

    def __repr__(self) -> str:
        spec: UdfSpec = getattr(self, SPEC_ATTR)
        return f"<{spec.kind} function {getattr(self, '__name__', '?')} ({spec.func_type})>"


def _check_func_type(func_type: str, allowed: tuple[str, ...]) -> str:
    ft = func_type.lower()
    if ft not in allowed:
        raise ValueError(f"func_type must be one of {', '.join(allowed)}, got {func_type!r}")
    return ft


def _decorate(f: Any, make: Callable[[Any], UdfSpec]) -> Any:
    if f is None:
        return lambda g: UserDefinedFunctionWrapper(make(g))
    return UserDefinedFunctionWrapper(make(f))


def _name(f: Any, name: str | None) -> str | None:
    return name or getattr(f, "__name__", None) or type(f).__name__.lower()


def udf(
    f: Any = None,
    input_types: list[DataType] | DataType | None = None,
    result_type: DataType | str | None = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """A scalar function. func_type "general" (per row), "pandas" (Series per batch) or
    "arrow" (pyarrow arrays per batch)."""
    ft = _check_func_type(func_type, ("general", "pandas", "arrow"))
    if result_type is None:
        raise ValueError("udf() needs result_type")
    inputs = [input_types] if isinstance(input_types, DataType) else input_types

    def make(g: Any) -> UdfSpec:
        return UdfSpec(
            "scalar",
            g,
            result_type=result_type,
            input_types=tuple(inputs) if inputs else None,
            func_type=ft,
            name=_name(g, name),
            deterministic=True if deterministic is None else deterministic,
        )

    return _decorate(f, make)


def udtf(
    f: Any = None,
    input_types: list[DataType] | DataType | None = None,
    result_types: list[DataType] | DataType | None = None,
    deterministic: bool | None = None,
    name: str | None = None,
) -> Any:
    """A table function: yields (or returns a list of) rows for each input row."""
    if result_types is None:
        raise ValueError("udtf() needs result_types")
    results = [result_types] if isinstance(result_types, (DataType, str)) else list(result_types)
    inputs = [input_types] if isinstance(input_types, DataType) else input_types

    def make(g: Any) -> UdfSpec:
        return UdfSpec(
            "table",
            g,
            result_types=tuple(results),
            input_types=tuple(inputs) if inputs else None,
            name=_name(g, name),
            deterministic=True if deterministic is None else deterministic,
        )

    return _decorate(f, make)


def udaf(
    f: Any = None,
    input_types: list[DataType] | DataType | None = None,
    result_type: DataType | str | None = None,
    accumulator_type: DataType | None = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """An aggregate function: an AggregateFunction object (general) or a function over a
    group's values as pandas Series (pandas)."""
    ft = _check_func_type(func_type, ("general", "pandas"))
    inputs = [input_types] if isinstance(input_types, DataType) else input_types

    def make(g: Any) -> UdfSpec:
        if ft == "general" and not hasattr(g, "accumulate"):
            raise TypeError("a general udaf must be an AggregateFunction (create_accumulator/accumulate/get_value)")
        rt = result_type if result_type is not None else getattr(g, "get_result_type", lambda: None)()
        if rt is None:
            raise ValueError(
                "udaf() needs result_type, or an AggregateFunction whose get_result_type() returns the type"
            )
        acc = accumulator_type if accumulator_type is not None else getattr(g, "get_accumulator_type", lambda: None)()
        return UdfSpec(
            "aggregate",
            g,
            result_type=rt,
            input_types=tuple(inputs) if inputs else None,
            accumulator_type=acc,
            func_type=ft,
            name=_name(g, name),
            deterministic=True if deterministic is None else deterministic,
        )

    return _decorate(f, make)


class TableAggregateFunction(ImperativeAggregateFunction):
    """Subclass and define `create_accumulator`, `accumulate(acc, *args)`, `emit_value(acc)`
    yielding the rows to emit (tuples / Row / values) and, for updating inputs,
    `retract(acc, *args)`. Used with `Table.flat_aggregate` (`streamsql.udf.udtaf`)."""

    def emit_value(self, accumulator: Any) -> Any:
        raise NotImplementedError


def udtaf(
    f: Any = None,
    input_types: list[DataType] | DataType | None = None,
    result_type: DataType | str | None = None,
    accumulator_type: DataType | None = None,
    deterministic: bool | None = None,
    name: str | None = None,
    func_type: str = "general",
) -> Any:
    """A table aggregate function (PyFlink's `udtaf`): a TableAggregateFunction object; its
    `emit_value` rows have `result_type` (a ROW type names the columns)."""
    ft = _check_func_type(func_type, ("general",))
    inputs = [input_types] if isinstance(input_types, DataType) else input_types

    def make(g: Any) -> UdfSpec:
        rt = result_type if result_type is not None else getattr(g, "get_result_type", lambda: None)()
        if rt is None:
            raise ValueError("udtaf() needs result_type")
        if not hasattr(g, "emit_value") or not hasattr(g, "accumulate"):
            raise TypeError("a udtaf must be a TableAggregateFunction (create_accumulator/accumulate/emit_value)")
        return UdfSpec(
            "table_aggregate",
            g,
            result_type=rt,
            input_types=tuple(inputs) if inputs else None,
            accumulator_type=accumulator_type,
            func_type=ft,
            name=_name(g, name),
            deterministic=True if deterministic is None else deterministic,
        )

    return _decorate(f, make)


def wrap_function_object(function: Any) -> Any:
    """What `create_temporary_function` & co. register for `function`: PyFlink also takes a
    bare AggregateFunction / TableAggregateFunction object and wraps it with `udaf` /
    `udtaf` by its own `get_result_type()` / `get_accumulator_type()`, named after its
    class. Anything else is returned as it is."""
    if getattr(function, SPEC_ATTR, None) is not None:
        return function
    name = type(function).__name__
    if isinstance(function, AggregateFunction):
        return udaf(function, name=name)
    if isinstance(function, TableAggregateFunction):
        return udtaf(function, name=name)
    return function
