"""A standalone Spark cluster on 127.0.0.1: one master and one worker, started with the
`spark-class` launcher that ships inside the PySpark wheel (no separate Spark install).

Jobs reach it as `spark://127.0.0.1:<port>`; the worker runs executors whose Python workers
use this interpreter (`PYSPARK_PYTHON`), so they import the same streamsql.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .ports import accepts, free_port, wait_until


@dataclass
class SparkCluster:
    """A running cluster: its master URL and the environment its clients run with."""

    master_url: str
    env: dict[str, str]


def start_spark_cluster(workdir: Path) -> Iterator[SparkCluster]:
    """Start a master and a worker (1 core, 1 GB), yield when the worker registered, stop both after."""
    import pyspark

    home = Path(pyspark.__file__).parent
    spark_class = str(home / "bin" / "spark-class")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_WORKER_DIR": str(workdir / "work"),
    }
    port = free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_cmd = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                  "--port", str(port), "--webui-port", str(free_port())]  # fmt: skip
    worker_port = free_port()
    worker_cmd = [spark_class, "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                  "--port", str(worker_port), "--cores", "1", "--memory", "1g",
                  "--webui-port", str(free_port())]  # fmt: skip
    procs: list[subprocess.Popen[bytes]] = []
    logs = []
    try:
        for name, cmd in (("master", master_cmd), ("worker", worker_cmd)):
            log_path = workdir / f"spark-{name}.log"
            log = open(log_path, "wb")  # noqa: SIM115 - closed in finally
            logs.append(log)
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(proc)

            def died(p: subprocess.Popen[bytes] = proc, path: Path = log_path) -> str | None:
                if p.poll() is None:
                    return None
                return f"exit {p.returncode}: {path.read_text(errors='replace')[-2000:]}"

            wait_until(
                lambda p=(port if name == "master" else worker_port): accepts(p),  # type: ignore[misc]
                timeout=60,
                what=f"Spark {name}",
                alive=died,
            )
        worker_log = workdir / "spark-worker.log"
        wait_until(
            lambda: "Successfully registered with master" in worker_log.read_text(errors="replace"),
            timeout=60,
            what="Spark worker registration",
            alive=lambda: None,
        )
        yield SparkCluster(master_url=master_url, env=env)
    finally:
        for p in reversed(procs):
            os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
        for log in logs:
            log.close()
