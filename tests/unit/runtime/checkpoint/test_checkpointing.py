"""Checkpoints in the local executor: storage, metadata, retention, restore, refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runtime.checkpoint import CheckpointStorage, find_latest, load_checkpoint
from runtime.checkpoint.config import CheckpointConfig
from runtime.checkpoint.restart import RestartBackoff
from runtime.checkpoint.restore import RestoreError
from runtime.frozen import frozen_dataclass
from runtime.operators.base import CheckpointingNotSupportedError
from runtime.operators.values import ValuesParams
from streamsql.environment import TableEnvironment


def _csv(path: Path, n: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "a.csv").write_text("".join(f"{i % 5},{i},{1_700_000_000_000 + i * 100}\n" for i in range(n)))


def _env(tmp: Path, **conf: str) -> TableEnvironment:
    env = TableEnvironment.create(
        {
            "execution.checkpointing.dir": f"file://{tmp}/chk",
            "table.exec.source.batch-rows": "10",
            **conf,
        }
    )
    env.execute_sql(
        f"CREATE TABLE src (k INT, v BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), "
        f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='filesystem','path'='{tmp}/in','format'='csv')"
    )
    env.execute_sql(
        f"CREATE TABLE out1 (k INT, c BIGINT, s BIGINT) WITH ('connector'='filesystem','path'='{tmp}/out','format'='csv')"
    )
    return env


INSERT = (
    "INSERT INTO out1 SELECT k, COUNT(*), SUM(v) FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
    "GROUP BY k, window_start, window_end"
)


def _rows(out: Path) -> list[str]:
    return sorted(
        line for f in sorted(os.listdir(out)) if not f.startswith(".") for line in (out / f).read_text().splitlines()
    )


def test_periodic_checkpoints_metadata_retention_and_exactly_once_output(tmp_path: Path) -> None:
    _csv(tmp_path / "in", 300)
    env = _env(tmp_path, **{"execution.checkpointing.interval": "1 ms", "state.checkpoints.num-retained": "2"})
    r = env.execute_sql(INSERT)
    r.wait()
    job_id = r.job.get_job_id()  # type: ignore[union-attr]
    job_dir = tmp_path / "chk" / job_id
    chks = sorted(os.listdir(job_dir))
    assert len(chks) == 2, chks  # num-retained
    latest = find_latest(f"file://{tmp_path}/chk", job_id)
    assert latest is not None
    meta = json.loads((job_dir / f"chk-{latest.metadata.checkpoint_id}" / "_metadata").read_text())
    ops = {o["operator"]: o for o in meta["operators"]}
    assert ops["WindowAggregate"]["state_names"][:2] == ["keyed", "aggset"]
    assert ops["TableSourceScan"]["file"] and meta["kind"] == "checkpoint"
    # a reference run without checkpoints gives the same rows
    ref = tmp_path / "ref"
    env2 = TableEnvironment.create({})
    env2.execute_sql(
        f"CREATE TABLE src (k INT, v BIGINT, ts_ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ts_ms, 3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector'='filesystem','path'='{tmp_path}/in','format'='csv')"
    )
    env2.execute_sql(
        f"CREATE TABLE out1 (k INT, c BIGINT, s BIGINT) WITH ('connector'='filesystem','path'='{ref}','format'='csv')"
    )
    env2.execute_sql(INSERT).wait()
    assert _rows(tmp_path / "out") == _rows(ref)


def test_incomplete_checkpoint_is_never_chosen(tmp_path: Path) -> None:
    storage = CheckpointStorage(str(tmp_path))
    storage.write("job/chk-7/op-x.state", b"partial")  # no _metadata: interrupted
    assert find_latest(str(tmp_path), "job") is None
    with pytest.raises(RestoreError, match="no _metadata there"):
        load_checkpoint(str(tmp_path / "job" / "chk-7"))


def test_savepoint_restore_continues_and_refuses_changed_sql(tmp_path: Path) -> None:
    _csv(tmp_path / "in", 200)
    env = _env(tmp_path)
    result = env.execute_sql(INSERT)
    job = result.job
    assert job is not None
    job.wait()
    # a savepoint of a finished job cannot be taken
    with pytest.raises(RuntimeError, match="not running"):
        job.trigger_savepoint(str(tmp_path / "sp"))
    # checkpoint dir layout reused as a savepoint: restore the final checkpoint of a checkpointed run
    env3 = _env(tmp_path, **{"execution.checkpointing.interval": "1 h"})
    r3 = env3.execute_sql(INSERT)
    r3.wait()
    snap = find_latest(f"file://{tmp_path}/chk", r3.job.get_job_id())  # type: ignore[union-attr]
    assert snap is not None
    # the same SQL restores (nothing left to do: no new rows)
    before = _rows(tmp_path / "out")
    env4 = _env(tmp_path, **{"execution.savepoint.path": snap.location})
    env4.execute_sql(INSERT).wait()
    assert _rows(tmp_path / "out") == before
    # a different aggregation: the window operator's state is unclaimed -> refused with a report
    env5 = _env(tmp_path, **{"execution.savepoint.path": snap.location})
    changed = INSERT.replace("GROUP BY k,", "GROUP BY v, k,").replace("SELECT k,", "SELECT k,")
    with pytest.raises(RestoreError, match="WindowAggregate"):
        env5.execute_sql(changed).wait()
    env6 = _env(
        tmp_path,
        **{"execution.savepoint.path": snap.location, "execution.savepoint.ignore-unclaimed-state": "true"},
    )
    env6.execute_sql(changed).wait()


def test_unsupported_operator_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    from runtime.executor.local import LocalExecutor
    from runtime.graph import JobGraph, Node
    from runtime.operators import spec as spec_module
    from runtime.operators.base import Operator
    from runtime.operators.spec import OperatorParams, OperatorSpec
    from runtime.types import BIGINT, Field

    @frozen_dataclass
    class UndeclaredParams(OperatorParams):
        pass

    class Undeclared(Operator):  # declares no `checkpointing` mode
        pass

    class UndeclaredSpec(OperatorSpec[UndeclaredParams]):
        name = "TestUndeclared"
        params_type = UndeclaredParams
        operator_class = Undeclared
        parallel = True

    # A stand-in kind for this test only (not registered globally).
    monkeypatch.setitem(spec_module._SPECS, UndeclaredSpec.name, UndeclaredSpec())  # noqa: SLF001

    graph = JobGraph(
        nodes=(
            Node(0, "Values", (), (Field("x", BIGINT()),), ValuesParams(())),
            Node(1, "TestUndeclared", (0,), (Field("x", BIGINT()),), UndeclaredParams()),
        ),
        config={"execution.checkpointing.interval": "1 s", "execution.checkpointing.dir": str(tmp_path)},
    )
    with pytest.raises(CheckpointingNotSupportedError, match="TestUndeclared"):
        list(LocalExecutor(graph).run())


def test_restart_strategies() -> None:
    assert RestartBackoff(CheckpointConfig.from_config({})).next_delay() is None
    fixed = RestartBackoff(
        CheckpointConfig.from_config(
            {
                "restart-strategy.type": "fixed-delay",
                "restart-strategy.fixed-delay.attempts": "2",
                "restart-strategy.fixed-delay.delay": "10 ms",
            }
        )
    )
    assert [fixed.next_delay(), fixed.next_delay(), fixed.next_delay()] == [0.01, 0.01, None]
    exp = RestartBackoff(
        CheckpointConfig.from_config(
            {
                "restart-strategy.type": "exponential-delay",
                "restart-strategy.exponential-delay.initial-backoff": "100 ms",
                "restart-strategy.exponential-delay.max-backoff": "300 ms",
            }
        )
    )
    assert [exp.next_delay() for _ in range(3)] == [0.1, 0.2, 0.3]
