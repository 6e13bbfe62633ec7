"""The dashboard page in headless Chromium (Debian's `chromium`, installed with apt-get when
missing): every operator of the job graph is drawn, counters move, and a screenshot is saved
under the test's tmp dir (STREAMSQL_DASHBOARD_PNG=path also copies it, for docs/img)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from streamsql.environment import TableEnvironment

DDL = """
CREATE TABLE src (k INT, v BIGINT, ts AS LOCALTIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'fields.k.min' = '1', 'fields.k.max' = '5');
CREATE TABLE snk (k INT, c BIGINT, ws TIMESTAMP(3)) WITH ('connector' = 'blackhole');
"""
INSERT = (
    "INSERT INTO snk SELECT k, COUNT(*), window_start FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
    "INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end"
)


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "update"], capture_output=True, timeout=300)
        subprocess.run(["apt-get", "install", "-y", "chromium"], capture_output=True, timeout=600)
    found = shutil.which("chromium")
    if not found:
        pytest.skip("Debian's chromium is not installed and could not be installed with apt-get")
    return found


def _browser(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    base = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=4000",
    ]
    return subprocess.run(base + list(args), capture_output=True, text=True, timeout=300)


@pytest.fixture
def running_job(tmp_path: Path) -> Any:
    env = TableEnvironment.create(
        {
            "rest.port": "0",
            "execution.checkpointing.interval": "500 ms",
            "execution.checkpointing.dir": str(tmp_path / "chk"),
        }
    )
    env.execute_sql(DDL)
    job = env.execute_sql(INSERT).job
    yield env, job
    job.cancel()
    job.join(60)
    env._rest_server.shutdown()


def _wait(value: Any, timeout: float = 300) -> Any:
    """`value()` once it is truthy (a condition a loaded machine reaches later, not never)."""
    deadline = time.monotonic() + timeout
    while not (got := value()):
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)
    return got


def _get(url: str) -> Any:
    import json
    import urllib.request

    with urllib.request.urlopen(url, timeout=60) as resp:
        return json.loads(resp.read())


def _rows_out(dom: str) -> dict[str, int]:
    return {
        m.group(1): int(m.group(2)) for m in re.finditer(r'data-vertex-id="([0-9a-f]+)"[^>]*data-rows-out="(\d+)"', dom)
    }


def test_dashboard_draws_graph_and_counters_move(running_job: Any, tmp_path: Path) -> None:
    env, job = running_job
    chromium = _chromium()
    url = env._rest_server.url
    executor = _wait(job._executor)
    source = executor.uids[executor.graph.nodes[0].id]
    # what the first page must show: rows out of the source and a completed checkpoint
    _wait(lambda: executor.metrics[executor.graph.nodes[0].id].rows_out > 0)
    _wait(lambda: _get(url + f"jobs/{job.get_job_id()}/checkpoints")["counts"]["completed"] >= 1)
    first = _browser(chromium, tmp_path / "p1", "--dump-dom", url).stdout
    operators = [n.operator for n in executor.graph.nodes]
    drawn = re.findall(r'class="node" id="node-[0-9a-f]+" data-vertex-id="[0-9a-f]+" data-operator="(\w+)"', first)
    assert drawn == operators, (drawn, first[:2000])
    assert 'class="edge"' in first and "CHECKPOINT (full)" in first
    before = _rows_out(first)
    assert before[source] > 0, before
    # the counter moved on since the first page (waited for, not a fixed pause)
    _wait(lambda: executor.metrics[executor.graph.nodes[0].id].rows_out > before[source])
    second = _browser(chromium, tmp_path / "p2", "--dump-dom", url).stdout
    after = _rows_out(second)
    assert after[source] > before[source] > 0, (before, after)
    shot = tmp_path / "dashboard.png"
    _browser(chromium, tmp_path / "p3", f"--screenshot={shot}", "--window-size=1400,1450", url)
    assert shot.is_file() and shot.stat().st_size > 10_000
    target = os.environ.get("STREAMSQL_DASHBOARD_PNG")
    if target:
        shutil.copy(shot, target)
