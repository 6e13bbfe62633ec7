"""Statement scripts in the style of the Flink SQL client's own tests (`*.q`).

A script is a sequence of blocks:

    # comments and blank lines between blocks are ignored
    statement text, possibly over several lines, ending with ';'
    the exact output the client prints for it
    !ok | !info | !error

`!ok` marks a result table, `!info` an `[INFO]` message, `!error` an `[ERROR]` block.
`$TMP` in a script stands for a per-run temporary directory. `run_blocks` feeds the
statements one at a time to a runner and returns what it printed for each, so a test
compares statement by statement; `STREAMSQL_REGEN_SCRIPTS=1` rewrites the expected
outputs (review the diff before committing: the expected text is Flink's).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MARKERS = ("!ok", "!info", "!error")


@dataclass
class Block:
    statement: str
    expected: str
    marker: str
    line: int


def parse_script(text: str) -> tuple[list[Block], list[str]]:
    """The blocks of a script, and the text between them (kept to rewrite the file)."""
    blocks: list[Block] = []
    gaps: list[str] = []
    lines = text.splitlines(keepends=True)
    i = 0
    gap: list[str] = []
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            gap.append(line)
            i += 1
            continue
        start = i
        stmt: list[str] = []
        while i < len(lines):
            stmt.append(lines[i])
            i += 1
            if lines[i - 1].rstrip().endswith(";"):
                text = "".join(stmt).upper()
                in_set = re.match(r"\s*(EXPLAIN\s+)?EXECUTE\s+STATEMENT\s+SET", text)
                if not in_set or re.search(r"\bEND\s*;\s*$", text):
                    break
        out: list[str] = []
        while i < len(lines) and lines[i].rstrip() not in MARKERS:
            out.append(lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError(f"line {start + 1}: a statement without a closing !ok / !info / !error marker")
        blocks.append(Block("".join(stmt), "".join(out), lines[i].rstrip(), start + 1))
        gaps.append("".join(gap))
        gap = []
        i += 1
    gaps.append("".join(gap))
    return blocks, gaps


def marker_of(output: str) -> str:
    if output.startswith("[ERROR]"):
        return "!error"
    if output.startswith("[INFO]"):
        return "!info"
    return "!ok"


def run_blocks(path: Path, tmp: Path, execute: Callable[[str], str]) -> list[tuple[Block, str]]:
    """Each block with what `execute(statement)` printed for it."""
    text = path.read_text().replace("$TMP", str(tmp))
    blocks, gaps = parse_script(text)
    results = [(b, execute(b.statement.rstrip().rstrip(";"))) for b in blocks]
    if os.environ.get("STREAMSQL_REGEN_SCRIPTS"):
        out = []
        for gap, (b, got) in zip(gaps, results, strict=False):
            out.append(gap + b.statement + got + marker_of(got) + "\n")
        out.append(gaps[-1])
        path.write_text("".join(out).replace(str(tmp), "$TMP"))
    return results


def normalize(text: str) -> str:
    """Job ids and query times differ between runs: a job id becomes `<job id>`, and the
    time after a query's row count (`3 rows in set (0.05 seconds)`, printed by default as
    `sql-client.display.print-time-cost` is true) is dropped, as Flink's own script tests
    turn it off."""
    text = re.sub(
        r"^((?:\d+ rows? in set|Received a total of \d+ rows?|Empty set)) \(\d+\.\d\d seconds\)$",
        r"\1",
        text,
        flags=re.M,
    )
    return re.sub(r"\b[0-9a-f]{32}\b", "<job id>", text)
