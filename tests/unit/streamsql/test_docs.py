"""Generated reference docs match the code (connector options, config keys, functions).

Run in a fresh interpreter: other tests register test-only connectors in this process."""

import subprocess
import sys
from pathlib import Path


def test_generated_docs_are_current() -> None:
    p = subprocess.run([sys.executable, "-m", "streamsql.docgen", "--check"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr + "\nrun `python -m streamsql.docgen` and commit docs/"


def test_function_examples_run() -> None:
    """Every documented example in docs/functions.md ran (its result, not an error, is shown)."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "functions.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows, "docs/functions.md lists no functions"
    failed = [r for r in rows if "| error:" in r]
    assert not failed, "examples that fail:\n" + "\n".join(failed)


def test_every_function_has_a_signature() -> None:
    """A function registered without `signature` (registry.document / scalar(signature=...))
    would show up undocumented in docs/functions.md."""
    from runtime.functions.registry import functions

    missing = [f.name for f in functions() if not f.signature]
    assert not missing, f"functions without a documented signature: {missing}"
