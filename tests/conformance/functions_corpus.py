"""Runs the built-in functions corpus (tests/conformance/functions, copied from
shared/conformance/functions) and explains failures per expression.

Every case runs in batch mode (the corpus' README). A case passes when:
- it is an error case: the engine fails with a clear error (SqlError / JobError, no
  traceback); a `suspected_flink_bug` error case also passes when the engine answers;
- otherwise: the final table equals Flink's (numbers by value, the rest as rendered text).

Per expression: each SELECT line `expr AS cN` (the corpus puts expression k on line k + 1)
runs alone with the case's key column (`id` or `k`), and its column of the expected table is
compared, so one missing function does not hide the state of the others in its case.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import expected_table, final_table, load_case, normalize, run_script

HERE = Path(__file__).parent
CORPUS = HERE / "functions"
# One entry per case that does not pass yet, with why; engineers remove entries as they fix
# them (the goal is an empty file). Regenerate with `functions_report.py --write-xfail`.
XFAIL_FILE = HERE / "functions_xfail.json"

_MISSING = re.compile(r"No match found for function signature (\w+)")


def case_dirs() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.is_dir())


@dataclass(frozen=True)
class Outcome:
    """`ok`: passed; otherwise `reason` says why, short enough for an xfail reason."""

    ok: bool
    reason: str = ""


def _error_reason(e: BaseException) -> tuple[bool, str]:
    """(clean, short reason) for an exception raised while running a query."""
    from planner.errors import SqlError
    from runtime.errors import JobError

    first = (str(e).strip().splitlines() or [""])[0]
    m = _MISSING.search(str(e))
    if m:
        return True, f"missing function {m.group(1).upper()}"
    if isinstance(e, SqlError | JobError):
        return True, f"error: {first[:160]}"
    return False, f"internal error: {type(e).__name__}: {first[:160]}"


def _run(script: str, case_dir: Path) -> list[dict[str, Any]]:
    return run_script(script, case_dir, "batch")


def run_case(case_dir: Path) -> Outcome:
    """Run one case in batch mode and judge it."""
    meta = load_case(case_dir)
    script = (case_dir / "case.sql").read_text()
    try:
        changelog = _run(script, case_dir)
    except Exception as e:  # noqa: BLE001 - judging any failure is the point here
        clean, reason = _error_reason(e)
        if meta.get("error") and clean:
            return Outcome(True)
        return Outcome(False, reason)
    if meta.get("error"):
        if meta.get("suspected_flink_bug"):
            return Outcome(True)
        return Outcome(False, f"answers where Flink fails: {meta.get('flink_root_cause', '')[:120]}")
    actual = normalize(final_table(changelog))
    expected = normalize(expected_table(case_dir, "batch"))
    if actual == expected:
        return Outcome(True)
    return Outcome(False, "value differs: " + ", ".join(_differing_columns(meta, actual, expected)))


def _project(table: Counter[tuple[Any, ...]], cols: list[int]) -> Counter[tuple[Any, ...]]:
    out: Counter[tuple[Any, ...]] = Counter()
    for row, n in table.items():
        out[tuple(row[i] if i < len(row) else "<missing>" for i in cols)] += n
    return out


def _differing_columns(
    meta: dict[str, Any], actual: Counter[tuple[Any, ...]], expected: Counter[tuple[Any, ...]]
) -> list[str]:
    columns: list[str] = list(meta.get("columns") or [])
    width = max((len(r) for r in expected), default=len(columns))
    key = [0] if columns and columns[0] in ("id", "k") else []
    bad = []
    for j in range(len(key), width):
        if _project(actual, key + [j]) != _project(expected, key + [j]):
            bad.append(columns[j] if j < len(columns) else f"column {j + 1}")
    return bad or ["row count"]


@dataclass(frozen=True)
class Expression:
    column: int  # index in the expected row
    text: str  # the expression as written
    script: str  # the case's script with only this expression selected


def split_expressions(case_dir: Path) -> list[Expression]:
    """The case's SELECT cut into one query per expression line; [] for hand-written shapes."""
    script = (case_dir / "case.sql").read_text()
    lines = script.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("SELECT")]
    if not starts:
        return []
    s = starts[-1]
    head = lines[s].rstrip(",").split()
    if head not in (["SELECT"], ["SELECT", "id"], ["SELECT", "k"]):
        return []
    nk = len(head) - 1
    body: list[str] = []
    i = s + 1
    while i < len(lines) and lines[i].startswith("  "):
        body.append(lines[i].rstrip().rstrip(","))
        i += 1
    rest = lines[i:]
    prefix = "\n".join(lines[:s])
    out = []
    for k, expr in enumerate(body):
        sel = ("SELECT " + head[1] + "," if nk else "SELECT") + "\n" + expr.rstrip(";")
        tail = "\n".join(rest) if rest else ""
        end = "" if tail else ";"
        q = f"{prefix}\n{sel}{end}\n{tail}"
        text = re.sub(r"\s+AS\s+c\d+;?$", "", expr.strip())
        out.append(Expression(nk + k, text, q))
    return out


def run_expression(case_dir: Path, expr: Expression) -> Outcome:
    meta = load_case(case_dir)
    try:
        changelog = _run(expr.script, case_dir)
    except Exception as e:  # noqa: BLE001
        clean, reason = _error_reason(e)
        if meta.get("error") and clean:
            return Outcome(True)
        return Outcome(False, reason)
    if meta.get("error"):
        return Outcome(bool(meta.get("suspected_flink_bug")), "answers where Flink fails")
    cols = [0, expr.column] if expr.column > 0 and meta.get("columns", [""])[0] in ("id", "k") else [expr.column]
    actual = normalize(final_table(changelog))
    expected = _project(normalize(expected_table(case_dir, "batch")), cols)
    if actual == expected:
        return Outcome(True)
    got = sorted(actual.elements(), key=str)[:6]
    want = sorted(expected.elements(), key=str)[:6]
    return Outcome(False, f"value differs: got {_show(got)} want {_show(want)}")


def _show(rows: list[tuple[Any, ...]]) -> str:
    def v(x: Any) -> str:
        return "NULL" if x is None else str(x[-1])

    return "[" + "; ".join(", ".join(v(x) for x in r) for r in rows) + "]"
