"""PyFlink Table API programs run unchanged but for their imports.

Each program in pyflink_programs/ is written against PyFlink's API, importing from
`pyflink.*`, the way PyFlink's documentation and examples use it. The test applies the
documented import rule (docs/table_api.md) and nothing else, runs the program as a script
and compares what it prints with the rows PyFlink gives (pyflink_programs/<name>.out).
Lines are compared as a multiset: within a window firing or a hash aggregation the order
in which rows print is not part of Flink's contract.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "pyflink_programs"

# The import rule of docs/table_api.md, as text substitutions on the program.
IMPORT_RULE = (
    (r"\bpyflink\.table\b", "streamsql"),
    (r"\bpyflink\.common\b", "streamsql.common"),
    (r"\bpyflink\.datastream\b", "streamsql.datastream"),
)


def rewrite_imports(source: str) -> str:
    for pattern, replacement in IMPORT_RULE:
        source = re.sub(pattern, replacement, source)
    return source


def test_the_rule_changes_only_import_lines() -> None:
    for program in PROGRAMS.glob("*.py"):
        before = program.read_text().splitlines()
        after = rewrite_imports(program.read_text()).splitlines()
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        assert changed, program.name
        assert all(a.startswith(("from pyflink", "import pyflink")) for a, _ in changed), changed
        assert "pyflink" not in rewrite_imports(program.read_text())


@pytest.mark.parametrize("program", sorted(p.stem for p in PROGRAMS.glob("*.py")))
def test_program_prints_pyflinks_rows(program: str, tmp_path: Path) -> None:
    script = tmp_path / f"{program}.py"
    script.write_text(rewrite_imports((PROGRAMS / f"{program}.py").read_text()))
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path, check=False
    )
    assert run.returncode == 0, run.stderr
    expected = (PROGRAMS / f"{program}.out").read_text().splitlines()
    assert sorted(run.stdout.splitlines()) == sorted(expected), run.stdout
