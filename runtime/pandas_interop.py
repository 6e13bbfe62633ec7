"""pandas at the edges: keep pyarrow from importing pandas on streamsql's behalf, and
convert Arrow ↔ pandas for pandas UDFs.

pyarrow imports pandas (~0.3-0.8 s) inside its conversions of Python values when pandas is
installed: its Python-side check (`pa.array`, `pa.scalar`, ...) once, its C++ sequence
converter on every conversion until pandas is there. A session converts Python values from
its first statement on (the CLI's `-e/-f`, a Table API program's `from_elements`), and
pandas is a dependency (to_pandas / from_pandas work after `pip install`), so without a
guard every session would pay for pandas it never uses.

The guard, installed by the CLI at start and by every `TableEnvironment`, is a meta-path
finder that refuses `pandas` only to imports streamsql's own code causes: the Python frame
that asked (past the import machinery and pyarrow's own Python modules) belongs to
planner/, runtime/ or streamsql/. Those are pyarrow's implicit imports inside our
conversions, since streamsql imports pandas itself only through `import_pandas()`. Every
other import of pandas works as in any process: the program's `import pandas` or
`__import__('pandas')`, a library importing it from C (DuckDB's `.df()`), pyarrow converting
values for the program or for a UDF. The first such import removes the guard and turns
pyarrow's pandas integration back on (pyarrow settled on "no pandas" when it was refused),
so pyarrow then works with pandas exactly as if nothing had happened.

`to_series` / `arrow_input` convert through NumPy should the integration still be off.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import FrameType
from typing import Any

import pyarrow as pa
import pyarrow.lib

# The packages whose imports of pandas are pyarrow's, on streamsql's behalf.
_STREAMSQL_PACKAGES = frozenset({"planner", "runtime", "streamsql"})


def _asked_by_streamsql(frame: FrameType | None) -> bool:
    """Whether the import running above `frame` was caused by streamsql's code: the first
    frame that is neither the import machinery nor pyarrow's Python code is ours (pyarrow's
    Cython and C++ run without frames, so the caller of a conversion is what is seen)."""
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if frame.f_code.co_filename.startswith("<frozen importlib") or module.partition(".")[0] == "pyarrow":
            frame = frame.f_back
            continue
        return module.partition(".")[0] in _STREAMSQL_PACKAGES
    return False


class _NoPandasForStreamsqlConversions(importlib.abc.MetaPathFinder):
    """Refuses `pandas` to imports streamsql's code causes (pyarrow converting values for
    it); any other import of pandas loads it, through `_LoadThenTellPyarrow`, and ends the
    guard."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        if _asked_by_streamsql(sys._getframe(1)):
            raise ImportError(
                "pandas is not imported for pyarrow's conversions of streamsql's values (it would cost "
                "every session ~0.3 s); it loads with the program's `import pandas` or with to_pandas() "
                "(runtime/pandas_interop.py)"
            )
        _uninstall()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _LoadThenTellPyarrow(spec.loader)
                return spec
        return None


class _LoadThenTellPyarrow(importlib.abc.Loader):
    """pandas' own loader, then pyarrow's pandas integration switched on (pyarrow settled on
    "no pandas" while the guard refused it, and looks again only when told)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        _tell_pyarrow()

    def __getattr__(self, name: str) -> Any:  # resource readers and the like: pandas' loader's
        return getattr(self._loader, name)


_installed: list[_NoPandasForStreamsqlConversions] = []


def _uninstall() -> None:
    for finder in _installed:
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
    _installed.clear()


def _tell_pyarrow() -> None:
    """Switch pyarrow's pandas integration on: its `pd` property imports pandas again when
    its first check found none (pandas is loaded by now) and loads its pandas shim."""
    try:
        _ = pyarrow.lib._pandas_api.pd
    except ImportError:  # a pandas pyarrow does not support: pyarrow goes on without it, as it would
        pass


def keep_pyarrow_from_pandas() -> None:
    """From now on pyarrow does not import pandas for streamsql's own conversions (the CLI
    calls this at start, a TableEnvironment when created). A no-op once pandas is imported."""
    if "pandas" in sys.modules or _installed:
        return
    finder = _NoPandasForStreamsqlConversions()
    sys.meta_path.insert(0, finder)
    _installed.append(finder)
    _ = pyarrow.lib._pandas_api.have_pandas  # pyarrow's one-time Python-side check, refused now


def import_pandas() -> Any:
    """The pandas module, for streamsql's own use of it (`to_pandas`, `from_pandas`, pandas
    UDFs and UDAFs): the guard ends and pyarrow's pandas integration comes on."""
    _uninstall()
    import pandas

    _tell_pyarrow()
    return pandas


def _pyarrow_has_pandas() -> bool:
    return bool(pyarrow.lib._pandas_api.have_pandas)


def to_series(array: pa.Array) -> Any:
    """An Arrow array as a pandas Series (pyarrow's conversion when it has pandas)."""
    if not _pyarrow_has_pandas():
        pd = import_pandas()
        if not _pyarrow_has_pandas():  # a pandas version pyarrow does not support
            return pd.Series(array.to_numpy(zero_copy_only=False))
    return array.to_pandas()


def arrow_input(values: Any) -> Any:
    """What `pa.array` takes for a function's result: a pandas Series as its NumPy values
    when pyarrow's pandas integration is off."""
    if (
        not _pyarrow_has_pandas()
        and hasattr(values, "to_numpy")
        and not isinstance(values, (pa.Array, pa.ChunkedArray))
    ):
        return values.to_numpy()
    return values


def pandas_argument(array: pa.Array) -> Any:
    """A pandas function's argument as PyFlink passes it: a Series, and for a ROW a
    DataFrame with one column per field (so `x.name` of the whole-row argument of a pandas
    `map` or `aggregate` works). A nested ROW field stays a Series of dicts, as in PyFlink."""
    if not pa.types.is_struct(array.type):
        return to_series(array)
    pd = import_pandas()
    columns = [to_series(f).rename(array.type.field(i).name) for i, f in enumerate(array.flatten())]
    if not columns:
        return pd.DataFrame(index=range(len(array)))
    return pd.concat(columns, axis=1)


def is_data_frame(values: Any) -> bool:
    """Whether a function returned a pandas DataFrame (without importing pandas for it)."""
    return type(values).__name__ == "DataFrame" and type(values).__module__.startswith("pandas")


def struct_from_frame(frame: Any, target: pa.DataType) -> pa.Array:
    """A pandas function's DataFrame result for a ROW type: its columns, by position, are
    the ROW's fields (PyFlink's row-based `map` with a pandas function returns one)."""
    if frame.shape[1] != target.num_fields:
        raise TypeError(f"a DataFrame of {frame.shape[1]} columns for a ROW of {target.num_fields} fields")
    arrays = [
        pa.array(arrow_input(frame.iloc[:, i]), type=target.field(i).type, from_pandas=True)
        for i in range(target.num_fields)
    ]
    return pa.StructArray.from_arrays(arrays, fields=list(target))
