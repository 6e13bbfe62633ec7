"""The SQL client's statement path, in process, for the tests that replay Flink's
documentation pages (test_flink_docs_*.py), and the cells of the tables it prints."""

from __future__ import annotations

import argparse
import io
from collections.abc import Callable


def sql_client() -> Callable[[str], str]:
    """A function that runs one statement as `streamsql -f` does (in the current
    directory) and returns what the client printed; an `[ERROR]` fails the test unless the
    caller asks for it with `errors=True`."""
    from streamsql.cli import Runner, build_parser

    args: argparse.Namespace = build_parser().parse_args([])
    out = io.StringIO()
    runner = Runner(args, out, out)

    def run(sql: str, errors: bool = False) -> str:
        start = out.tell()
        runner.run_script(sql.rstrip().rstrip(";") + ";", "script")
        printed = out.getvalue()[start:]
        assert errors or "[ERROR]" not in printed, printed
        return printed

    return run


def cells(text: str, rename: dict[str, str] | None = None) -> list[list[str]]:
    """The rows of the first ASCII table in `text` (header first), cells stripped: names in
    `rename` replaced (in the header and in DESCRIBE's name column), a streaming result's
    `op` column dropped (all its rows must be +I), DESCRIBE's `null` column upper-cased
    (Flink 1.x printed `true`, 2.x prints `TRUE`)."""
    rows = [[c.strip() for c in line.strip()[1:-1].split("|")] for line in text.splitlines() if line.startswith("|")]
    if not rows:
        raise AssertionError(f"no table in:\n{text}")
    names = rename or {}
    rows = [[names.get(c, c) for c in row] if i == 0 or row[0] in names else row for i, row in enumerate(rows)]
    if rows[0][0] == "op":
        assert all(r[0] == "+I" for r in rows[1:]), text
        rows = [r[1:] for r in rows]
    if "null" in rows[0]:
        at = rows[0].index("null")
        rows = [r if i == 0 else [*r[:at], r[at].upper(), *r[at + 1 :]] for i, r in enumerate(rows)]
    return rows
