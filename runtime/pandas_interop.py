"""pandas at the edges: keep pyarrow from importing pandas where nothing needs it, and
convert Arrow ↔ pandas for pandas UDFs.

pyarrow asks pandas whether any Python value it converts is "array-like", importing pandas
(~0.25-0.8 s) the first time, when pandas is installed; a session converts Python values
from its first statement on (the CLI's `-e/-f`, a Table API program's `from_elements`).
The CLI at start and every `TableEnvironment` call `keep_pyarrow_from_pandas()`: pyarrow
then records, once, that pandas is absent, and does not import it by itself. pandas itself
can still be imported by an import statement (the user's program, a pandas UDF's module,
`to_pandas`); that import switches pyarrow's pandas integration back on, so pyarrow then
works with pandas exactly as if nothing had happened. `to_series` / `arrow_input` also
convert through NumPy should the integration be off.
"""

from __future__ import annotations

import dis
import importlib.abc
import importlib.machinery
import sys
from typing import Any

import pyarrow as pa
import pyarrow.lib


class _PandasOnlyForImportStatements(importlib.abc.MetaPathFinder):
    """Refuses pandas to pyarrow's own imports (its C++ conversions and its pandas shim call
    the import machinery from inside a conversion), while an `import pandas` statement or
    `importlib.import_module('pandas')` in Python code (a pandas UDF's module) works, and
    then turns pyarrow's pandas integration on (`_LoadThenTellPyarrow`)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back  # type: ignore[assignment]
        if (
            frame is None
            or frame.f_code.co_filename.endswith(("importlib/__init__.py", "importlib\\__init__.py"))
            or dis.opname[frame.f_code.co_code[frame.f_lasti]] == "IMPORT_NAME"
        ):
            return self._allowed(fullname, path, target)
        raise ImportError(
            "pyarrow does not import pandas by itself in a streamsql session (it would cost every "
            "session ~0.3 s): `import pandas` first, or use streamsql's to_pandas() (runtime/pandas_interop.py)"
        )

    def _allowed(self, fullname: str, path: Any, target: Any) -> importlib.machinery.ModuleSpec | None:
        """pandas' spec from the other finders, loaded by `_LoadThenTellPyarrow`; the guard is
        done (pandas is there from now on)."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        _installed.clear()
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _LoadThenTellPyarrow(spec.loader)
                return spec
        return None


class _LoadThenTellPyarrow(importlib.abc.Loader):
    """pandas' own loader, then pyarrow's pandas integration switched on: pyarrow settled
    on "no pandas" when it was refused, and looks again only when told (its `pd` property
    imports pandas, loaded by then, and its pandas compatibility module)."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            _ = pyarrow.lib._pandas_api.pd
        except ImportError:  # a pandas pyarrow does not support: pyarrow goes on without it, as it would
            pass

    def __getattr__(self, name: str) -> Any:  # resource readers and the like: pandas' loader's
        return getattr(self._loader, name)


_installed: list[_PandasOnlyForImportStatements] = []


def keep_pyarrow_from_pandas() -> None:
    """From now on pyarrow does not import pandas by itself (the CLI calls this at start, a
    TableEnvironment when created; `import pandas` in Python code still works, and turns
    pyarrow's integration on). pyarrow's Python-side check runs once per process and
    settles on "no pandas"; its C++ conversions ask again each time until pandas is
    imported, and are refused."""
    if "pandas" in sys.modules or _installed:
        return
    finder = _PandasOnlyForImportStatements()
    sys.meta_path.insert(0, finder)
    _installed.append(finder)
    _ = pyarrow.lib._pandas_api.have_pandas  # pyarrow's one-time check, refused now


def import_pandas() -> Any:
    """The pandas module, imported by an import statement (so the guard lets it through and
    pyarrow's integration comes on): for `to_pandas` / `from_pandas`."""
    import pandas

    return pandas


def _pyarrow_has_pandas() -> bool:
    return bool(pyarrow.lib._pandas_api.have_pandas)


def to_series(array: pa.Array) -> Any:
    """An Arrow array as a pandas Series (pyarrow's conversion when it has pandas)."""
    if _pyarrow_has_pandas():
        return array.to_pandas()
    import pandas as pd

    return pd.Series(array.to_numpy(zero_copy_only=False))


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
