"""The function registry imports only the module of the function looked up (its index,
runtime/functions/_index.py, is generated; tests/unit/streamsql/test_docs.py checks it is
current), and a name the index lacks still finds its function."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from runtime.functions.registry import build_index, function_names


def test_lookup_loads_the_functions_module_only_and_a_stale_index_loads_all() -> None:
    code = textwrap.dedent(
        """
        import sys
        from runtime.functions import registry
        def loaded():
            return sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("runtime.functions."))
        assert registry.lookup("GREATER_THAN") is not None
        print("after greater_than:", "comparison" in loaded(), "strings" in loaded(), "arrays" in loaded())
        registry.MODULE_OF.pop("upper")  # as if UPPER were added after the index was generated
        print("upper found:", registry.lookup("upper") is not None, "strings" in loaded(), "arrays" in loaded())
        print("unknown:", registry.lookup("no_such_function"))
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert "after greater_than: True False False" in run.stdout, run.stdout
    assert "upper found: True True True" in run.stdout, run.stdout
    assert "unknown: None" in run.stdout, run.stdout


def test_the_index_needs_a_fresh_interpreter() -> None:
    function_names()  # loads every function module
    with pytest.raises(RuntimeError, match="fresh|loaded no function module"):
        build_index()
