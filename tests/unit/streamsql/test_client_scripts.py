"""The SQL client's output, statement by statement, against scripts in Flink's client
test style (tests/unit/streamsql/scripts/*.q; format in client_scripts.py).

Every script runs twice: through the `streamsql -f` runner (cli.Runner, one statement
at a time so a script goes on after an expected error, as the Flink client's tests do)
and through the interactive shell's statement handling (shell.session.ShellSession).
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest
from client_scripts import normalize, run_blocks

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.q"))


def _runner() -> object:
    from streamsql.cli import Runner, build_parser

    args: argparse.Namespace = build_parser().parse_args([])
    out = io.StringIO()
    return Runner(args, out, out), out


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_through_the_cli_runner(script: Path, tmp_path: Path) -> None:
    runner, out = _runner()

    def execute(sql: str) -> str:
        start = out.tell()
        runner.run_script(sql + ";", "script")  # type: ignore[attr-defined]
        return out.getvalue()[start:]

    for block, got in run_blocks(script, tmp_path, execute):
        assert normalize(got) == normalize(block.expected), f"{script.name}:{block.line}: {block.statement}"


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_script_through_the_shell(script: Path, tmp_path: Path) -> None:
    from streamsql.environment import TableEnvironment
    from streamsql.shell.session import ShellSession

    out = io.StringIO()
    session = ShellSession(TableEnvironment.create({}), out)

    def execute(sql: str) -> str:
        start = out.tell()
        session.execute(sql + ";")
        return out.getvalue()[start:]

    for block, got in run_blocks(script, tmp_path, execute):
        assert normalize(got) == normalize(block.expected), f"{script.name}:{block.line}: {block.statement}"
