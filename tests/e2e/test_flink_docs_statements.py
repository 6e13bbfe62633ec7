"""The examples of Flink 2.x's SQL reference, statement pages, run unchanged through the
SQL client's statement path (`streamsql -f`'s runner, in process), each compared with
what Flink's client prints.

One script per page in tests/e2e/flink_docs/*.q, in the client-script format of
tests/unit/streamsql/client_scripts.py (statement, expected output, `!ok` / `!info` /
`!error`); `STREAMSQL_REGEN_SCRIPTS=1` rewrites the outputs (review the diff: the expected
text is Flink's). Each script's header says where it departs from the page (the pages
elide connector options as `WITH (...)`; a real connector stands in) and why.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = sorted((Path(__file__).parent / "flink_docs").glob("*.q"))


def _client_scripts() -> ModuleType:
    path = Path(__file__).parents[1] / "unit" / "streamsql" / "client_scripts.py"
    spec = importlib.util.spec_from_file_location("flink_docs_client_scripts", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_documented_examples(script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamsql.cli import Runner, build_parser

    scripts = _client_scripts()
    monkeypatch.chdir(tmp_path)
    args: argparse.Namespace = build_parser().parse_args([])
    out = io.StringIO()
    runner = Runner(args, out, out)

    def execute(sql: str) -> str:
        start = out.tell()
        runner.run_script(sql + ";", "script")
        return out.getvalue()[start:]

    for block, got in scripts.run_blocks(script, tmp_path, execute):
        expected = scripts.normalize(block.expected)
        assert scripts.normalize(got) == expected, f"{script.name}:{block.line}: {block.statement}"
