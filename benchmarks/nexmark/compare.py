"""`run.py --compare flink`: find a PyFlink interpreter, drive flink_worker.py, and print the
side-by-side table (streamsql vs Apache Flink events/s per core, ratio, geometric mean).

Kept out of run.py so the table arithmetic can be unit-tested without Flink, and so run.py
stays the streamsql side. Nothing here imports streamsql or pyflink.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKER = HERE / "flink_worker.py"
# Where this project's machines keep a Flink venv (PyFlink needs its own JVM-backed install,
# kept apart from the project's dependencies); first match wins after --flink-python / $FLINK_PYTHON.
VENV_CANDIDATES = ("/work/flinkvenv/bin/python", str(Path.home() / "flinkvenv/bin/python"))


def default_flink_python() -> str | None:
    """The interpreter that runs the Flink side: ``$FLINK_PYTHON``; else this interpreter if it
    imports pyflink; else the first existing of VENV_CANDIDATES; else None (Flink skipped)."""
    env = os.environ.get("FLINK_PYTHON")
    if env:
        return env
    if importlib.util.find_spec("pyflink") is not None:
        return sys.executable
    return next((c for c in VENV_CANDIDATES if os.access(c, os.X_OK)), None)


def has_pyflink(python: str) -> bool:
    """Does ``python`` import pyflink? (a cheap probe: no JVM is started)."""
    probe = subprocess.run([python, "-c", "import pyflink"], capture_output=True, text=True, timeout=60, check=False)
    return probe.returncode == 0


def run_flink_worker(
    python: str,
    spec: dict[str, Any],
    timeout: float,
    on_result: Callable[[dict[str, Any]], None] = lambda r: None,
) -> dict[str, dict[str, Any]]:
    """Run every query of ``spec`` in one flink_worker.py process; results by name.

    ``timeout`` bounds the whole process (the worker bounds each job itself); queries with no
    result line when it ends (crash, kill) get an error naming the worker's last stderr line."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(spec, fh)
    err = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen([python, str(WORKER), fh.name], stdout=subprocess.PIPE, stderr=err, text=True)
    deadline = time.monotonic() + timeout
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("RESULT "):
                r = json.loads(line[len("RESULT ") :])
                results[r["name"]] = r
                on_result(r)
            if time.monotonic() > deadline:
                proc.kill()
                break
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        os.unlink(fh.name)
    err.seek(0)
    tail = [ln for ln in err.read().splitlines() if ln.strip()]
    why = tail[-1][:160] if tail else f"flink worker exit code {proc.returncode}"
    for q in spec["queries"]:
        results.setdefault(q["name"], {"name": q["name"], "error": f"no result: {why}"})
    return results


# ---------------------------------------------------------------------- the comparison table


def per_core(events: int, r: dict[str, Any] | None) -> float | None:
    """Events per CPU second, or None for a failed / missing run."""
    if not r or "error" in r or r.get("cpu", 0) <= 0:
        return None
    return events / r["cpu"]


def geomean(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def _num(v: float | None, width: int) -> str:
    return f"{v:>{width},.0f}" if v is not None else f"{'-':>{width}}"


def _ratio(v: float | None) -> str:
    return f"{v:>7.2f}x" if v is not None else f"{'-':>8}"


def comparison_table(
    events: int,
    queries: list[str],
    streamsql: dict[str, dict[str, dict[str, Any]]],
    flink: dict[str, dict[str, Any]],
    overhead_cpu: float | None = None,
) -> list[str]:
    """Markdown rows: query | streamsql ev/s/core per source | flink ev/s/core | ratios | rows.

    ``streamsql`` maps a source label ("nexmark": generated in-engine, "file": the same JSON
    file Flink reads) to results by query. ratio = streamsql / flink events per CPU second
    (> 1: streamsql does more per core). With ``overhead_cpu`` (the CPU of an almost empty
    Flink job in the warm JVM) a "flink net" column also divides by the query's CPU minus that
    fixed per-job cost, with its own ratios: the figure a long-running Flink job would
    approach. The last rows give the geometric mean of each ratio over the queries both
    engines ran, and how many those are; a failed run shows its error after the row."""
    sources = list(streamsql)
    flinks = ["flink"] + (["flink net"] if overhead_cpu is not None else [])
    pairs = [(s, f) for f in flinks for s in sources]
    head = ["query"] + [f"streamsql {s} ev/s/core" for s in sources] + [f"{f} ev/s/core" for f in flinks]
    head += [f"ratio {s}/{f}" for s, f in pairs] + ["final rows"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    ratios: dict[tuple[str, str], list[float]] = {pair: [] for pair in pairs}
    for q in queries:
        fr = flink.get(q)
        theirs = {"flink": per_core(events, fr)}
        if overhead_cpu is not None:
            net = dict(fr, cpu=fr["cpu"] - overhead_cpu) if fr and "cpu" in fr and fr["cpu"] > overhead_cpu else None
            theirs["flink net"] = per_core(events, net)
        mine = {s: per_core(events, streamsql[s].get(q)) for s in sources}
        cells = [q] + [_num(mine[s], 12) for s in sources] + [_num(theirs[f], 12) for f in flinks]
        for s, f in pairs:
            a, b = mine[s], theirs[f]
            ratio = a / b if a is not None and b else None
            if ratio is not None:
                ratios[(s, f)].append(ratio)
            cells.append(_ratio(ratio))
        cells.append(rows_check(q, streamsql, fr))
        errors = [f"{s}: {streamsql[s][q]['error']}" for s in sources if "error" in streamsql[s].get(q, {})]
        if fr and fr.get("error"):
            errors.append(f"flink: {fr['error']}")
        lines.append("| " + " | ".join(cells) + " |" + (" " + "; ".join(errors) if errors else ""))
    means = [geomean(ratios[pair]) for pair in pairs]
    cells = ["geomean"] + [""] * (len(sources) + len(flinks)) + [_ratio(m) for m in means] + [""]
    lines.append("| " + " | ".join(cells) + " |")
    counted = ", ".join(f"{s}/{f}: {len(ratios[(s, f)])}" for s, f in pairs)
    lines.append(f"(geometric means over the queries both engines ran; queries counted: {counted})")
    return lines


def rows_check(q: str, streamsql: dict[str, dict[str, dict[str, Any]]], flink: dict[str, Any] | None) -> str:
    """'=' when every counted final row count agrees, 'DIFF a/b' when not, '' when not counted."""
    counts = {s: r[q]["rows"] for s, r in streamsql.items() if "rows" in r.get(q, {})}
    if flink and "rows" in flink:
        counts["flink"] = flink["rows"]
    if len(counts) < 2:
        return ""
    if len(set(counts.values())) == 1:
        return f"= {next(iter(counts.values())):,}"
    return "DIFF " + " ".join(f"{k}={v:,}" for k, v in counts.items())
