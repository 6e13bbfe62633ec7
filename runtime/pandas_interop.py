"""pandas at the edges: keep pyarrow from importing pandas where nothing needs it, and
convert Arrow ↔ pandas for pandas UDFs whether or not pyarrow's pandas integration is on.

pyarrow asks pandas whether any Python value it converts is "array-like", importing pandas
(~0.25 s) the first time, when pandas is installed; `streamsql -e/-f` converts Python
values from its first statement on. The CLI calls `keep_pyarrow_from_pandas()` at start:
pyarrow then records, once, that pandas is absent, and never imports it. pandas itself can
still be imported (pandas UDFs do); `to_series` / `arrow_input` convert through NumPy when
pyarrow's integration is off.
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
    `importlib.import_module('pandas')` in Python code (a pandas UDF's module) works."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "pandas":
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
            frame = frame.f_back  # type: ignore[assignment]
        if frame is None or frame.f_code.co_filename.endswith(("importlib/__init__.py", "importlib\\__init__.py")):
            return None
        if dis.opname[frame.f_code.co_code[frame.f_lasti]] == "IMPORT_NAME":
            return None
        raise ImportError("pandas is not imported for pyarrow's conversions in the streamsql CLI")


_installed: list[_PandasOnlyForImportStatements] = []


def keep_pyarrow_from_pandas() -> None:
    """From now on pyarrow does not import pandas by itself (the CLI calls this at start;
    `import pandas` in Python code still works). pyarrow's Python-side check runs once per
    process and settles on "no pandas"; its C++ conversions ask again each time until
    pandas is imported, and are refused."""
    if "pandas" in sys.modules or _installed:
        return
    finder = _PandasOnlyForImportStatements()
    sys.meta_path.insert(0, finder)
    _installed.append(finder)
    _ = pyarrow.lib._pandas_api.have_pandas  # pyarrow's one-time check, refused now


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
