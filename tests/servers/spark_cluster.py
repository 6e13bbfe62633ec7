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

from .ports import die_with_parent, free_port, listens, retry_start, wait_until


@dataclass
class SparkCluster:
    """A running cluster: its master URL and the environment its clients run with."""

    master_url: str
    env: dict[str, str]


def start_spark_cluster(workdir: Path) -> Iterator[SparkCluster]:
    """Start a master and a worker (1 core, 1 GB), yield when the worker registered, stop both after."""
    import pyspark

    home = Path(pyspark.__file__).parent
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_WORKER_DIR": str(workdir / "work"),
    }
    procs, master_url = retry_start(lambda: _launch(str(home / "bin" / "spark-class"), env, workdir))
    try:
        yield SparkCluster(master_url=master_url, env=env)
    finally:
        _stop(procs)


def _launch(spark_class: str, env: dict[str, str], workdir: Path) -> tuple[list[subprocess.Popen[bytes]], str]:
    """A master and a worker on new free ports, once the worker registered (stopped if not).
    Spark moves to the next port when its port is taken: then the master's port does not
    answer from the master's process, it is stopped, and the start is retried."""
    port = free_port()
    master_url = f"spark://127.0.0.1:{port}"
    master_cmd = [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                  "--port", str(port), "--webui-port", str(free_port())]  # fmt: skip
    worker_port = free_port()
    worker_cmd = [spark_class, "org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                  "--port", str(worker_port), "--cores", "1", "--memory", "1g",
                  "--webui-port", str(free_port())]  # fmt: skip
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name, cmd, own_port in (("master", master_cmd, port), ("worker", worker_cmd, worker_port)):
            log_path = workdir / f"spark-{name}-{port}.log"
            with open(log_path, "wb") as log:  # the child has its own copy of the descriptor
                proc = subprocess.Popen(
                    cmd,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=die_with_parent(signal.SIGTERM),
                )
            procs.append(proc)

            def died(p: subprocess.Popen[bytes] = proc, path: Path = log_path, at: int = own_port) -> str | None:
                if p.poll() is not None:
                    return f"exit {p.returncode}: {path.read_text(errors='replace')[-2000:]}"
                if f"could not bind on port {at}" in path.read_text(errors="replace"):
                    return f"its port {at} was taken"  # Spark went on to another port
                return None

            wait_until(lambda p=proc, at=own_port: listens(p.pid, at), what=f"Spark {name}", alive=died)  # type: ignore[misc]
        worker_log = workdir / f"spark-worker-{port}.log"
        wait_until(
            lambda: "Successfully registered with master" in worker_log.read_text(errors="replace"),
            what="Spark worker registration",
            alive=lambda: next((f"exit {p.returncode}" for p in procs if p.poll() is not None), None),
        )
    except BaseException:
        _stop(procs)
        raise
    return procs, master_url


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in reversed(procs):
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)
