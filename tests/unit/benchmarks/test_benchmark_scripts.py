"""The benchmark scripts' own logic, without Apache Flink: the Nexmark comparison table
(ratio, geometric mean, row-count check, errors shown), the Flink worker's process-tree
CPU measurement and its error path, and the skew benchmark's data and summary."""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[3]
NEXMARK = ROOT / "benchmarks" / "nexmark"


def _load(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    sys.path.insert(0, str(path.parent))  # run.py imports compare.py from its folder
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


compare = _load("compare", NEXMARK / "compare.py")
flink_worker = _load("nexmark_flink_worker", NEXMARK / "flink_worker.py")
run = _load("nexmark_run", NEXMARK / "run.py")
skew = _load("skew_distinct", ROOT / "benchmarks" / "skew_distinct.py")


def _r(cpu: float, rows: int | None = None) -> dict[str, object]:
    out: dict[str, object] = {"wall": cpu, "cpu": cpu, "maxrss_kb": 1024}
    if rows is not None:
        out["rows"] = rows
    return out


def test_comparison_table_ratios_geomean_and_errors() -> None:
    events = 1000
    mine = {
        "nexmark": {"q0": _r(0.1, rows=5), "q1": _r(1.0, rows=7), "q2": {"error": "boom"}},
        "file": {"q0": _r(0.2), "q1": _r(2.0), "q2": _r(1.0)},
    }
    flink = {"q0": _r(0.4, rows=5), "q1": _r(1.0, rows=8), "q2": {"error": "TableException: rejected"}}
    lines = compare.comparison_table(events, ["q0", "q1", "q2"], mine, flink)
    header, _, q0, q1, q2, mean, note = lines
    assert "streamsql nexmark ev/s/core" in header and "ratio file/flink" in header and "net" not in header
    cells = [c.strip() for c in q0.split("|")[1:-1]]
    assert cells == ["q0", "10,000", "5,000", "2,500", "4.00x", "2.00x", "= 5"]  # events / cpu; 0.4/0.1, 0.4/0.2
    assert "DIFF" in q1 and "nexmark=7" in q1 and "flink=8" in q1
    assert "nexmark: boom" in q2 and "flink: TableException: rejected" in q2
    # geomean over the queries both ran: nexmark sqrt(4 * 1) = 2, file sqrt(2 * 0.5) = 1
    assert [c.strip() for c in mean.split("|")[1:-1]][4:6] == ["2.00x", "1.00x"]
    assert "nexmark/flink: 2" in note and "file/flink: 2" in note


def test_comparison_table_net_of_flink_job_overhead() -> None:
    """Flink's fixed per-job CPU (0.2 s here) subtracted: 0.4 s -> 0.2 s, ratio 4x -> 2x."""
    lines = compare.comparison_table(1000, ["q0"], {"file": {"q0": _r(0.1)}}, {"q0": _r(0.4)}, overhead_cpu=0.2)
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert cells == ["q0", "10,000", "2,500", "5,000", "4.00x", "2.00x", ""]


def test_geomean_and_per_core() -> None:
    assert compare.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert compare.geomean([]) is None
    assert compare.per_core(100, {"error": "x"}) is None
    assert compare.per_core(100, None) is None
    assert compare.per_core(100, _r(0.5)) == pytest.approx(200)


def test_default_flink_python_prefers_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLINK_PYTHON", "/opt/flink/bin/python")
    assert compare.default_flink_python() == "/opt/flink/bin/python"


def test_tree_cpu_counts_children() -> None:
    """The JVM is a child of the PyFlink process: its CPU must be in the figure."""
    burn = (
        "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\nprint('done', flush=True)\n"
    )
    burn += "time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True)
    try:
        before = flink_worker.tree_cpu_seconds(os.getpid())
        assert child.stdout is not None and child.stdout.readline() == "done\n"  # burnt 0.6 s, still alive
        after = flink_worker.tree_cpu_seconds(os.getpid())
        assert child.pid in flink_worker.process_tree(os.getpid())
        assert after - before >= 0.3
        assert flink_worker.tree_hwm_kb(os.getpid()) > 0
    finally:
        child.kill()
        child.wait()


def test_flink_worker_reports_failures_per_query(tmp_path: Path) -> None:
    """Run with an interpreter without pyflink: every query is a row with its error, none hidden."""
    if importlib.util.find_spec("pyflink") is not None:
        pytest.skip("this interpreter has pyflink")
    spec = {
        "mode": "streaming",
        "parallelism": 1,
        "timeout": 30,
        "warmup": ["SELECT 1"],
        "queries": [{"name": "q0", "statements": ["SELECT 1"], "count": True}, {"name": "q1", "statements": ["x"]}],
    }
    seen: list[str] = []
    results = compare.run_flink_worker(sys.executable, spec, 120, lambda r: seen.append(r["name"]))
    assert seen == ["startup", "job-overhead", "q0", "q1"]
    assert "pyflink" in results["q0"]["error"] and "pyflink" in results["q1"]["error"]


def test_flink_statements_split_and_set() -> None:
    stmts = run.flink_statements("q5", run.file_options("/tmp/x.jsonl"))
    assert flink_worker.SET.match(stmts[0]).groups() == ("pipeline.auto-watermark-interval", "0")
    assert not any(flink_worker.SET.match(s) for s in stmts[1:])
    last = "\n".join(ln for ln in stmts[-1].splitlines() if not ln.lstrip().startswith("--"))
    assert "'path' = '/tmp/x.jsonl'" in stmts[1] and last.lstrip().upper().startswith("SELECT")
    assert all(not s.rstrip().endswith(";") for s in stmts)


def test_events_file_is_readable_by_streamsql(tmp_path: Path) -> None:
    """write_events_jsonl's timestamps must parse (an old strftime wrote '.000.%f'); q0 = bids."""
    path = tmp_path / "ev.jsonl"
    bids = run.write_events_jsonl(300, 10_000, path)
    assert ".%f" not in path.read_text() and 0 < bids < 300
    from streamsql import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    *setup, last = env.parse(run.script("q0", run.file_options(str(path))))
    for stmt in setup:
        env.execute_statement(stmt).wait()
    assert run.final_count(env, last.sql) == bids


def test_skew_data_has_one_key_with_half_the_rows() -> None:
    from streamsql import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(skew.ddl(1000, 10, 100))
    df = env.execute_sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k").to_pandas()
    counts = dict(zip(df["k"], df["n"], strict=True))
    assert counts[0] == 500 and len(counts) == 11 and sum(counts.values()) == 1000


def test_skew_split_and_unsplit_agree_and_summary() -> None:
    off = skew.final_table(2000, 10, 300, split=False, parallelism=1, mini_batch=False)
    on = skew.final_table(2000, 10, 300, split=True, parallelism=1, mini_batch=False)
    assert off == on and len(off) == 11
    runs = [
        {"split": False, "wall": 4.0, "cpu": 3.0},
        {"split": True, "wall": 2.0, "cpu": 3.3},
        {"split": False, "wall": 6.0, "cpu": 3.0},
        {"split": True, "wall": 2.0, "cpu": 3.3},
        {"split": True, "error": "x"},
    ]
    s = skew.summary(runs)
    assert s["speedup_wall"] == pytest.approx(2.5) and math.isclose(s["cpu_on"], 3.3)
    assert math.isnan(s["critical_cpu_on"])  # not measured in these runs
