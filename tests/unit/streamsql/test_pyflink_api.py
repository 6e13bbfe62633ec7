"""Every public name of PyFlink 2.3's Table API exists here, with a compatible signature,
or raises the documented JvmRequiredError.

data/pyflink_2_3_api.json lists, per PyFlink module, its public names (`__all__`) and for
each class its public methods with their kind (method / property / static / classmethod)
and parameter names, as PyFlink 2.3's API reference documents them. The module of each name
here follows the import rule of docs/table_api.md. Constructors that wrap a Java object
(`__init__(self, j_table, ...)`) are PyFlink internals and are not part of the contract.
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest

from streamsql.unsupported import JvmRequiredError

API = json.loads((Path(__file__).parent / "data" / "pyflink_2_3_api.json").read_text())


def streamsql_module(pyflink_module: str) -> str:
    return pyflink_module.replace("pyflink.table", "streamsql").replace("pyflink.common", "streamsql.common")


def _internal_constructor(method: str, params: list[str]) -> bool:
    return method == "__init__" and any(p.lstrip("_").startswith(("j_", "java_")) for p in params)


def _signature_problem(ours: Any, theirs: list[str]) -> str | None:
    """Why `ours` cannot be called as PyFlink's signature allows (None when it can)."""
    try:
        sig = inspect.signature(ours)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    names = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    var_pos = any(p.kind == p.VAR_POSITIONAL for p in params)
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params)
    declared = [t for t in theirs if t.rstrip("=") not in ("self", "cls")]
    for t in declared:
        if t.startswith("**"):
            if not var_kw:
                return f"takes no **{t[2:]}"
        elif t.startswith("*"):
            if not var_pos:
                return f"takes no *{t[1:]}"
        elif t.rstrip("=") not in names and not var_kw:
            return f"has no parameter {t.rstrip('=')}"
    theirs_names = {t.rstrip("=").lstrip("*") for t in declared}
    required = [
        p.name
        for p in params
        if p.default is p.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and p.name not in ("self", "cls")
    ]
    extra = [r for r in required if r not in theirs_names]
    return f"requires {extra}, which PyFlink does not" if extra else None


def _check(module: str, name: str, info: dict[str, Any]) -> list[str]:
    mod = importlib.import_module(streamsql_module(module))
    try:
        obj = getattr(mod, name)
    except JvmRequiredError:
        return []
    except AttributeError:
        return [f"{name}: missing"]
    problems = []
    if info.get("kind") == "function":
        why = _signature_problem(obj, info["params"])
        return [f"{name}{info['params']}: {why}"] if why else []
    for method, m in info.get("methods", {}).items():
        if _internal_constructor(method, m["params"]):
            continue
        try:
            attr = inspect.getattr_static(obj, method)
        except AttributeError:
            try:
                getattr(obj, method)
            except (JvmRequiredError, NotImplementedError):
                continue
            except AttributeError:
                problems.append(f"{name}.{method}: missing")
                continue
            attr = getattr(obj, method)
        if m["kind"] == "property":
            if not isinstance(attr, property) and callable(attr):
                problems.append(f"{name}.{method}: PyFlink's is a property, this is a method")
            continue
        if isinstance(attr, property):
            problems.append(f"{name}.{method}: PyFlink's is a method, this is a property")
            continue
        target = getattr(obj, method, None)
        if callable(target):
            why = _signature_problem(target, m["params"])
            if why:
                problems.append(f"{name}.{method}{m['params']}: {why}")
    return problems


@pytest.mark.parametrize("module", sorted(API))
def test_every_pyflink_name_exists_with_a_compatible_signature(module: str) -> None:
    problems = [p for name, info in sorted(API[module].items()) for p in _check(module, name, info)]
    assert not problems, "\n".join(problems)


def test_names_that_need_a_jvm_say_so() -> None:
    from streamsql.common import SimpleStringSchema
    from streamsql.datastream import StreamExecutionEnvironment
    from streamsql.types import UserDefinedType

    for make in (SimpleStringSchema, UserDefinedType, lambda: StreamExecutionEnvironment().from_collection([1])):
        with pytest.raises(JvmRequiredError, match="not available in streamsql"):
            make()


def test_an_unknown_expression_method_names_the_closest_pyflink_method() -> None:
    from streamsql.expressions import col

    with pytest.raises(AttributeError, match="Did you mean 'json_value'"):
        col("doc").json_valu("$.a")  # type: ignore[operator]
    with pytest.raises(AttributeError, match="has no attribute 'nosuchmethod'"):
        col("doc").nosuchmethod  # noqa: B018


def test_counts_per_module() -> None:
    """How much of each module exists (printed with -s; the issue note quotes them)."""
    for module in sorted(API):
        names = API[module]
        methods = sum(len(i.get("methods", {})) for i in names.values())
        bad = [p for name, info in names.items() for p in _check(module, name, info)]
        print(f"{module}: {len(names)} names, {methods} methods, {len(bad)} gaps")
        assert not bad
