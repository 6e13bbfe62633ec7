"""The statement scripts (tests/unit/streamsql/scripts/*.q) typed into the real interactive
shell in a pseudo-terminal, one statement at a time, as Flink's SQL client tests run
theirs: every expected output must appear on the terminal."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

ROOT = Path(__file__).parents[2]
SCRIPTS = ROOT / "tests" / "unit" / "streamsql" / "scripts"
sys.path.insert(0, str(ROOT / "tests" / "unit" / "streamsql"))

from client_scripts import normalize, parse_script  # noqa: E402

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[>=]")


def _clean(text: str) -> str:
    return _ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "")


@pytest.mark.parametrize("name", sorted(p.stem for p in SCRIPTS.glob("*.q")))
def test_script_in_the_real_shell(name: str, tmp_path: Path) -> None:
    text = (SCRIPTS / f"{name}.q").read_text().replace("$TMP", str(tmp_path))
    blocks, _ = parse_script(text)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(SCRIPTS.parent)]),
        "HOME": str(tmp_path),
        "TERM": "dumb",
    }
    child = pexpect.spawn(
        sys.executable,
        ["-m", "streamsql.cli"],
        env=env,
        cwd=str(tmp_path),
        encoding="utf-8",
        dimensions=(60, 1000),
        timeout=300,  # per expected prompt: a loaded machine answers late, not never
    )
    try:
        child.expect("streamsql>")
        for block in blocks:
            statement = block.statement.rstrip("\n")
            for line in statement.split("\n"):  # typed as written: Enter before ';' continues
                child.sendline(line)
            child.expect("streamsql>")
            got = normalize(_clean(child.before))
            expected = normalize(block.expected)
            # The terminal shows the echoed statement, then the output.
            assert expected.strip() in got, (
                f"{name}.q:{block.line}: {statement}\n--- expected\n{expected}\n--- got\n{got}"
            )
        child.sendline("QUIT;")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
