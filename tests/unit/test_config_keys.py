"""Configuration keys are declared once and read only through their declaration
(runtime/config/options.py, streamsql/config.py).

Checked on the AST of planner/, runtime/ and streamsql/:
- no string literal shaped like a configuration key (`table.…`, `execution.…`, …) appears
  outside the `key("…")` call that declares it (so no code reads or writes a key by its
  name, declared or not);
- every `key("…")` declaration is collected by the registry (`OPTION_MODULES`), and no key
  is declared twice.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from streamsql.config import all_options

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("planner", "runtime", "streamsql")
KEY_SHAPE = re.compile(
    r"(table|execution|pipeline|state|taskmanager|parallelism|sql-client|streamsql|rest|restart-strategy|s3"
    r"|python|metrics|web|jobmanager|cluster|high-availability)\.[a-z0-9][a-z0-9.\-]*"
)
# Declaration calls: their string arguments are the declared key names.
DECLARING = {"key", "with_fallback_keys", "with_deprecated_keys"}


def _declaration_strings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are arguments of a declaring call."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in DECLARING:
                ids.update(id(a) for a in node.args if isinstance(a, ast.Constant))
    return ids


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            ids.add(id(node.value))
    return ids


def _is_module_name(text: str) -> bool:
    """'streamsql.rest' and the like name packages, not keys."""
    try:
        return importlib.util.find_spec(text) is not None
    except (ImportError, ValueError):
        return False


def key_literals(source: str, filename: str = "<test>") -> list[tuple[int, str]]:
    """(line, text) of every key-shaped string literal that is not a declaration."""
    tree = ast.parse(source, filename=filename)
    skip = _declaration_strings(tree) | _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if KEY_SHAPE.fullmatch(node.value) and not _is_module_name(node.value):
                found.append((node.lineno, node.value))
    return found


def _declared_keys(source: str) -> list[str]:
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "key":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.append(node.args[0].value)
    return out


# The key -> module index is generated from the declarations (`python -m streamsql.docgen`;
# tests/unit/streamsql/test_docs.py checks it is current): its keys are no second spelling.
GENERATED = {ROOT / "streamsql" / "_options_index.py"}


def _sources() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py") if p not in GENERATED)


# Entry-point group names (not configuration keys).
NOT_KEYS = {"streamsql.connectors", "streamsql.catalogs"}  # entry-point groups, not keys


def test_no_configuration_key_is_named_outside_its_declaration() -> None:
    bad = [
        f"{p.relative_to(ROOT)}:{line}: '{text}'"
        for p in _sources()
        for line, text in key_literals(p.read_text(encoding="utf-8"), str(p))
        if text not in NOT_KEYS
    ]
    assert not bad, (
        "configuration keys named by a string literal; declare the key once with "
        "runtime.config.key(...) and read it with OPTION.get(conf) / write OPTION.key:\n" + "\n".join(bad)
    )


def test_every_declaration_is_registered_once() -> None:
    declared: dict[str, list[str]] = {}
    for p in _sources():
        for k in _declared_keys(p.read_text(encoding="utf-8")):
            declared.setdefault(k, []).append(str(p.relative_to(ROOT)))
    twice = {k: where for k, where in declared.items() if len(where) > 1}
    assert not twice, f"keys declared more than once: {twice}"
    registered = {o.key for o in all_options()}
    missing = sorted(set(declared) - registered)
    assert not missing, f"declared but not collected (add the module to streamsql.config.OPTION_MODULES): {missing}"


def test_checker_sees_undeclared_reads() -> None:
    src = 'cfg.get("streamsql.optimizer.disabled-rules")\nx = key("table.exec.foo")\n"""pipeline.name"""\n'
    assert key_literals(src) == [(1, "streamsql.optimizer.disabled-rules")]
    assert _declared_keys(src) == ["table.exec.foo"]
