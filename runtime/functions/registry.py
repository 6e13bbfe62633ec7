"""The scalar function registry: one entry per canonical function name, holding both its
type inference (used by the planner's binder) and its vectorized kernel (used by the
runtime's evaluator). Keeping both together means a function cannot be typed one way and
computed another.

Kernel contract: `kernel(args, arg_types, result_type, ctx)` where each arg is a
`pa.Array` of length `ctx.num_rows`, or a `pa.Scalar` when the argument is a literal
(kernels that need a constant parameter, such as a format string, read `.as_py()`).
It returns a `pa.Array` of `result_type.to_arrow()` with `ctx.num_rows` rows, or a
`pa.Scalar` which the evaluator broadcasts. Kernels are vectorized: no Python loop per row
on the common path (a loop over *distinct* values, e.g. a format string, is fine).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa

from runtime.frozen import frozen_dataclass
from runtime.functions._index import MODULE_OF
from runtime.plugins import import_submodules
from runtime.types import DataType

ArgValue: TypeAlias = pa.Array | pa.Scalar


class FunctionTypeError(Exception):
    """The arguments' types do not fit the function. The binder turns this into a
    validation error with the call's line and column."""


@frozen_dataclass
class EvalContext:
    """What a kernel may need besides its arguments: row count, time zone, statement time, configuration."""

    num_rows: int
    time_zone: str = "UTC"
    # Epoch ms of the batch's evaluation, for CURRENT_ROW_TIMESTAMP, UNIX_TIMESTAMP() and, in
    # STREAMING mode, CURRENT_TIMESTAMP & co. (same value for every row of the batch).
    now_ms: int = 0
    # In BATCH mode, the query's start: CURRENT_TIMESTAMP, NOW, LOCALTIMESTAMP, CURRENT_DATE,
    # CURRENT_TIME and LOCALTIME are evaluated once as the query starts (Flink's planner
    # reduces them). None: they read `now_ms` (STREAMING evaluates them per record).
    query_now_ms: int | None = None
    # The job's configuration, for kernels that take options (async Python functions).
    config: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    # Per row, the watermark (epoch ms) in effect when the row reached the operator (the
    # batch's `__wm` column, runtime/batch.py), for CURRENT_WATERMARK; None where the
    # operator does not see watermarks (every row then has none yet).
    watermarks: np.ndarray | None = field(default=None, compare=False, hash=False)
    # Per operator instance, what non-deterministic kernels keep across batches, by call
    # site: `call_key` names the call being evaluated (the evaluator sets it for
    # non-deterministic functions). None outside an operator (constant folding, tests):
    # such a kernel then starts afresh.
    state: dict[int, Any] | None = field(default=None, compare=False, hash=False)
    call_key: int = field(default=0, compare=False, hash=False)


Infer = Callable[[list[DataType]], DataType]
# Inference that also sees literal argument values (None where an argument is not a
# literal): for functions whose result type depends on a constant, e.g. ROUND(d, 2).
InferWithLiterals = Callable[[list[DataType], list[object]], DataType]
Kernel = Callable[[list[ArgValue], list[DataType], DataType, EvalContext], ArgValue]


@frozen_dataclass
class ScalarFunction:
    """A built-in scalar function: its typing (`infer`) and its kernel, declared together."""

    name: str
    infer: Infer
    kernel: Kernel
    # False for functions like CURRENT_TIMESTAMP/RAND: not constant-folded.
    deterministic: bool = True
    aliases: tuple[str, ...] = field(default=())
    infer_with_literals: InferWithLiterals | None = None
    # For docs/functions.md (generated): the SQL call form(s) and one example call whose
    # result type and value the doc generator computes by running it.
    signature: str = ""
    example: str = ""

    def result_type(self, arg_types: list[DataType], literals: list[object] | None = None) -> DataType:
        """The result type for these arguments; `literals` holds literal argument values."""
        if self.infer_with_literals is not None and literals is not None:
            return self.infer_with_literals(arg_types, literals)
        return self.infer(arg_types)


_REGISTRY: dict[str, ScalarFunction] = {}


def register(fn: ScalarFunction) -> ScalarFunction:
    for n in (fn.name, *fn.aliases):
        _REGISTRY[n.lower()] = fn
    return fn


_register = register  # `build_index` swaps `register` for one that notes the caller


def scalar(
    name: str,
    infer: Infer,
    *aliases: str,
    deterministic: bool = True,
    infer_with_literals: InferWithLiterals | None = None,
    signature: str = "",
    example: str = "",
) -> Callable[[Kernel], Kernel]:
    """Decorator: register `kernel` under `name` (and aliases) with its type inference;
    `signature` and `example` document it (docs/functions.md)."""

    def deco(kernel: Kernel) -> Kernel:
        register(
            ScalarFunction(name, infer, kernel, deterministic, tuple(aliases), infer_with_literals, signature, example)
        )
        return kernel

    return deco


def document(docs: dict[str, tuple[str, str]]) -> None:
    """Attach (signature, example) to functions registered by the calling module, for
    docs/functions.md: one table at the end of a module, next to the functions it describes."""
    from dataclasses import replace

    for name, (signature, example) in docs.items():
        fn = _REGISTRY[name]
        register(replace(fn, signature=signature, example=example))


def lookup(name: str) -> ScalarFunction | None:
    """The function called `name` (or an alias). Only the module that defines it is
    imported, found in runtime/functions/_index.py (generated from the modules by
    `python -m streamsql.docgen`): a query loads the modules of the functions it calls,
    not all ~25 (start-up). A name the index does not know (a user function's, or a
    built-in added since the index was generated) loads them all, so a stale index costs
    time, never a function."""
    n = name.lower()
    fn = _REGISTRY.get(n)
    if fn is None:
        module = MODULE_OF.get(n)
        if module is None:
            _ensure_loaded()
        else:
            importlib.import_module(f"{__package__}.{module}")
        fn = _REGISTRY.get(n)
    return fn


def is_deterministic(name: str) -> bool:
    """Whether calls of `name` give the same result for the same arguments (False for RAND,
    NOW, CURRENT_WATERMARK, ...: the planner must not duplicate, move or fold them), from the
    function's own declaration. A name that is no built-in function (an operator the binder
    emits) is deterministic, and does not make `lookup` load every function module."""
    n = name.lower()
    if n not in _REGISTRY and n not in MODULE_OF:
        return True
    fn = lookup(n)
    return fn is None or fn.deterministic


def functions() -> list[ScalarFunction]:
    """Every registered function once (aliases not repeated), by name."""
    _ensure_loaded()
    return sorted({id(f): f for f in _REGISTRY.values()}.values(), key=lambda f: f.name)


def function_names() -> list[str]:
    _ensure_loaded()
    return sorted(_REGISTRY)


# Not function modules: the registry itself, and `async_udf`, which defines no function
# and loads asyncio (with the first async function).
_NOT_FUNCTION_MODULES = ("registry", "async_udf")


def _ensure_loaded() -> None:
    """Import the modules that define functions (they register themselves on import)."""
    import_submodules(__package__, skip=_NOT_FUNCTION_MODULES)


def build_index() -> dict[str, str]:
    """Name (and alias) -> the module whose body registers it: the content of
    runtime/functions/_index.py. Needs an interpreter that has loaded no function module
    yet: it imports them all and notes, at each registration, the module executing it
    (`scalar`'s and `document`'s caller). A name registered by two modules is an error:
    which one would win depends on the import order."""
    if _REGISTRY:
        raise RuntimeError("build_index needs an interpreter that has loaded no function module")
    index: dict[str, str] = {}

    def noting(fn: ScalarFunction) -> ScalarFunction:
        frame = sys._getframe(1)
        while frame.f_code.co_name != "<module>":
            frame = frame.f_back  # type: ignore[assignment]  # a registration runs in a module body
        module = frame.f_globals["__name__"].removeprefix(f"{__package__}.")
        for n in (fn.name, *fn.aliases):
            if index.setdefault(n.lower(), module) != module:
                raise RuntimeError(f"function '{n}' is registered by two modules: {index[n.lower()]} and {module}")
        return _register(fn)

    globals()["register"] = noting
    try:
        _ensure_loaded()
    finally:
        globals()["register"] = _register
    return dict(sorted(index.items()))


def index_source(index: dict[str, str]) -> str:
    """runtime/functions/_index.py for `index` (ruff-formatted as written)."""
    lines = [
        '"""Which module defines each built-in function (name or alias -> module of',
        "runtime/functions), so `registry.lookup` imports only that one. Generated by",
        "`python -m streamsql.docgen` from the modules (`registry.build_index`); edit the",
        'functions, not this file (tests/unit/streamsql/test_docs.py checks it is current)."""',
        "",
        "MODULE_OF: dict[str, str] = {",
        *(f'    "{name}": "{module}",' for name, module in index.items()),
        "}",
        "",
    ]
    return "\n".join(lines)
