"""Restore semantics with damaged checkpoints, as Flink's: `--restore latest` takes the
newest checkpoint that verifies, says on stderr which one and which newer ones it skipped
and why, and the committed output then equals an uninterrupted run's; when checkpoints
exist and none verifies it fails naming them and never starts over (no duplicate output).

Each case: the job (a window aggregation and a group aggregation into an exactly-once
filesystem sink and a DuckDB upsert sink, a checkpoint after nearly every source batch,
three retained) is killed with SIGKILL once its 4th checkpoint is complete (a condition,
not a batch count: under load the checkpoints lag behind the batches, and how many a run
completes varies), a checkpoint file is damaged,
and the job is run again with `--restore latest`.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from clitools import committed_lines, duckdb_rows

JOB = """
SET 'table.exec.source.batch-rows' = '40';
SET 'execution.checkpointing.interval' = '{interval}';
SET 'execution.checkpointing.dir' = 'file://{root}/chk';
SET 'state.checkpoints.num-retained' = '3';
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


def _run(root: Path, job: Path, fault: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("STREAMSQL_FAULT_INJECT", None)
    if fault:
        env["STREAMSQL_FAULT_INJECT"] = fault
    cmd = [sys.executable, "-m", "streamsql.cli", "-f", str(job), "--restore", "latest"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=root, timeout=600)


def _committed(out: Path) -> tuple[list[str], list[tuple[object, ...]]]:
    return committed_lines(out / "fs"), duckdb_rows(out / "out.duckdb", "SELECT * FROM agg ORDER BY k")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tuple[list[str], list[tuple[object, ...]]]]:
    """Inputs and the uninterrupted run's committed output (shared by the cases)."""
    root = tmp_path_factory.mktemp("corrupt")
    (root / "in_a").mkdir()
    rng = random.Random(11)
    with open(root / "in_a" / "a.csv", "w") as f:
        for i in range(3000):
            f.write(f"{rng.randrange(9)},{rng.randrange(1000)},{1_700_000_000_000 + i * 20}\n")
    ref = root / "ref.sql"
    ref.write_text(JOB.format(root=root, out="ref", interval="0"))
    done = _run(root, ref)
    assert done.returncode == 0, done.stderr
    expected = _committed(root / "ref")
    assert len(expected[0]) > 50 and len(expected[1]) == 9
    return root, expected


def _killed_run(root: Path, name: str) -> tuple[Path, Path]:
    """A job killed right after its 4th checkpoint completed, before its sinks committed
    it; (job file, job's checkpoint dir)."""
    job = root / f"{name}.sql"
    job.write_text(JOB.format(root=root, out=name, interval="1 ms").replace("/chk'", f"/chk-{name}'"))
    killed = _run(root, job, "metadata:4")
    assert killed.returncode == -9, killed.stderr
    (job_dir,) = [d for d in (root / f"chk-{name}").iterdir() if d.is_dir()]
    assert len(_checkpoints(job_dir)) == 3  # num-retained
    return job, job_dir


def _checkpoints(job_dir: Path) -> list[Path]:
    """The completed checkpoints (with `_metadata`), oldest first."""
    chks = [d for d in job_dir.iterdir() if d.name.startswith("chk-") and (d / "_metadata").exists()]
    return sorted(chks, key=lambda d: int(d.name[4:]))


def _state_file(chk: Path, operator: str) -> Path:
    meta = json.loads((chk / "_metadata").read_text())
    (op,) = [o for o in meta["operators"] if o["operator"] == operator and o["file"]][:1]
    return chk / op["file"]


def _flip(path: Path, pos: int) -> None:
    data = bytearray(path.read_bytes())
    data[pos % len(data)] ^= 0x01
    path.write_bytes(bytes(data))


def _garble(path: Path) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(3)
    for i in range(len(data) // 3, len(data) // 3 + 32):
        data[i % len(data)] = rng.randrange(256)
    path.write_bytes(bytes(data))


def _flip_source_offset(chk: Path) -> None:
    """One flipped byte in the source's recorded position (its state file)."""
    path = _state_file(chk, "TableSourceScan")
    _flip(path, len(path.read_bytes()) - 3)


def _flip_metadata_digit(chk: Path) -> None:
    """One digit changed inside `_metadata` (it still parses: a watermark, an offset...)."""
    text = (chk / "_metadata").read_text()
    i = text.index('"timestamp_ms": ') + len('"timestamp_ms": ')
    d = text[i]
    (chk / "_metadata").write_text(text[:i] + ("1" if d != "1" else "2") + text[i + 1 :])


def _garble_agg_state(chk: Path) -> None:
    _garble(_state_file(chk, "GroupAggregate"))


def _truncate_metadata(chk: Path) -> None:
    data = (chk / "_metadata").read_bytes()
    (chk / "_metadata").write_bytes(data[: len(data) // 2])


def _delete_state_file(chk: Path) -> None:
    _state_file(chk, "WindowAggregate").unlink()


CASES = {
    "flipped_source_offset": _flip_source_offset,
    "changed_metadata_digit": _flip_metadata_digit,
    "garbled_state_file": _garble_agg_state,
    "truncated_newest_metadata": _truncate_metadata,
    "missing_state_file": _delete_state_file,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_newest_checkpoint_falls_back_to_the_previous_one(setup: tuple[Path, object], case: str) -> None:
    root, expected = setup
    job, job_dir = _killed_run(root, case)
    chks = _checkpoints(job_dir)
    newest, previous = chks[-1], chks[-2]
    CASES[case](newest)
    done = _run(root, job)
    assert done.returncode == 0, done.stderr
    assert f"from checkpoint {previous.name[4:]} " in done.stderr, done.stderr
    assert f"- {newest.name}: " in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert _committed(root / case) == expected


def test_no_checkpoint_verifies_fails_naming_them_and_never_starts_over(setup: tuple[Path, object]) -> None:
    root, expected = setup
    job, job_dir = _killed_run(root, "allbad")
    before = _committed(root / "allbad")
    chks = _checkpoints(job_dir)
    for chk in chks:
        _flip(chk / "_metadata", 40)
    done = _run(root, job)
    assert done.returncode != 0
    assert "no checkpoint under" in done.stderr and "verifies" in done.stderr, done.stderr
    for chk in chks:
        assert f"- {chk.name}: " in done.stderr
    assert "Traceback" not in done.stderr
    assert _committed(root / "allbad") == before  # nothing re-run, nothing duplicated
    assert not Counter(before[0]) - Counter(expected[0])


def test_random_byte_corruption_restores_exactly_or_fails_cleanly(setup: tuple[Path, object]) -> None:
    """Property: corrupt random bytes of random files of random retained checkpoints; the
    restore either verifies and gives exactly the uninterrupted output, or (no checkpoint
    verifies) fails with a message naming them, never a traceback, never duplicates."""
    root, expected = setup
    rng = random.Random(2024)
    for trial in range(4):
        name = f"prop{trial}"
        job, job_dir = _killed_run(root, name)
        files = [f for c in _checkpoints(job_dir) for f in c.iterdir() if f.is_file()]
        for f in rng.sample(files, rng.randint(1, len(files))):
            data = bytearray(f.read_bytes())
            for _ in range(rng.randint(1, 4)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            f.write_bytes(bytes(data))
        before = _committed(root / name)
        done = _run(root, job)
        assert "Traceback" not in done.stderr and "Internal error" not in done.stderr, done.stderr
        if done.returncode == 0:
            assert _committed(root / name) == expected, done.stderr
        else:
            assert "verifies" in done.stderr, done.stderr
            assert _committed(root / name) == before
