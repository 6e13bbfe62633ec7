"""postgres-cdc against a real PostgreSQL server (tests/servers/postgres.py).

A writer thread runs inserts, updates and deletes on a source table while a `streamsql`
job (the real CLI) keeps `SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k` in a jdbc upsert
table and appends the raw changelog of the source table (a second postgres-cdc table on
it, with its own slot), through TO_CHANGELOG, to an append-mode jdbc table. Every row version of the source carries a version number (`ver`,
bumped by each update), so each change is one (op, id, ver) triple: the append table must
hold each change exactly once, with no version missing in between, and replaying it must
give the source table's final state. The final tables must equal what PostgreSQL computes
itself — once for an uninterrupted job, and once for a job killed with SIGKILL at 10 random
moments and resumed each time with `--restore latest` (most of them a random moment after
the run's first checkpoint, so every run restores and makes progress; every third a random
wall-clock moment after the start, which may land in start-up or restore).
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from servers.postgres import PostgresServer

from planner.errors import SqlError
from streamsql import EnvironmentSettings, TableEnvironment

KILLS = 10


def _cdc(pg: PostgresServer, table: str, slot: str, extra: str = "") -> str:
    return (
        f"'connector' = 'postgres-cdc', 'hostname' = '{pg.host}', 'port' = '{pg.port}', 'username' = 'postgres', "
        f"'password' = 'x', 'database-name' = '{pg.database}', 'schema-name' = 'public', 'table-name' = '{table}', "
        f"'slot.name' = '{slot}'{extra}"
    )


def _jdbc(pg: PostgresServer, table: str) -> str:
    return f"'connector' = 'jdbc', 'url' = '{pg.jdbc_url}', 'table-name' = '{table}', 'username' = 'postgres'"


def changelog_problem(log: list[tuple], final: list[tuple]) -> str | None:
    """Why the appended changelog `log` (op, id, k, v, ver) is not each change of the source
    exactly once, ending in the source's `final` rows (id, k, v, ver); None when it is. Per
    id: one INSERT (version a: 1, or later when the snapshot read the row), then for every
    later version b an UPDATE_BEFORE of b - 1 carrying version b - 1's values and an
    UPDATE_AFTER of b, then at most one DELETE of the last version."""
    seen: set[tuple] = set()
    events: dict[int, dict[str, dict[int, tuple]]] = defaultdict(lambda: defaultdict(dict))
    for op, i, k, v, ver in log:
        if (op, i, ver) in seen:
            return f"{op} of id {i} version {ver} appended twice"
        seen.add((op, i, ver))
        events[i][op][ver] = (k, v)
    now = {i: (k, v, ver) for i, k, v, ver in final}
    for i in set(events) | set(now):
        e = events[i]
        if len(e["INSERT"]) != 1:
            return f"id {i}: {len(e['INSERT'])} INSERTs"
        ((first, image),) = e["INSERT"].items()
        images = {first: image}
        last = first + len(e["UPDATE_AFTER"])
        for b in range(first + 1, last + 1):
            if b not in e["UPDATE_AFTER"] or b - 1 not in e["UPDATE_BEFORE"]:
                return f"id {i}: the update to version {b} is missing"
            if e["UPDATE_BEFORE"][b - 1] != images[b - 1]:
                return f"id {i}: UPDATE_BEFORE of version {b - 1} does not carry its values"
            images[b] = e["UPDATE_AFTER"][b]
        if len(e["UPDATE_BEFORE"]) != last - first:
            return f"id {i}: UPDATE_BEFORE rows without their UPDATE_AFTER"
        deleted = e["DELETE"]
        if deleted and (list(deleted) != [last] or deleted[last] != images[last]):
            return f"id {i}: DELETE {deleted} is not of the last version {last}"
        state = None if deleted else (*images[last], last)
        if state != now.get(i):
            return f"id {i}: the changelog ends in {state}, the source holds {now.get(i)}"
    return None


class _Tables:
    """The source and result tables of one scenario, and its job file."""

    def __init__(self, pg: PostgresServer, root: Path) -> None:
        self.pg = pg
        self.src, self.agg, self.log = pg.new_name("src"), pg.new_name("agg"), pg.new_name("log")
        pg.execute(f"CREATE TABLE {self.src} (id int PRIMARY KEY, k text NOT NULL, v bigint, ver bigint NOT NULL)")
        pg.execute(f"ALTER TABLE {self.src} REPLICA IDENTITY FULL")
        pg.execute(f"CREATE TABLE {self.agg} (k text PRIMARY KEY, c bigint, s numeric)")
        pg.execute(f"CREATE TABLE {self.log} (op text, id int, k text, v bigint, ver bigint)")
        self.rng = random.Random(f"{self.src}")
        self.next_id = 0
        with pg.connect(autocommit=False) as con:  # one connection: a connection costs ~10 ms
            for _ in range(200):  # rows the snapshot reads
                self.change(con)
        self.job = root / "job.sql"
        self.job.write_text(
            "SET 'execution.checkpointing.interval' = '200 ms';\n"
            f"SET 'execution.checkpointing.dir' = 'file://{root}/chk';\n"
            f"CREATE TABLE src (id INT, k STRING, v BIGINT, ver BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
            f"WITH ({_cdc(pg, self.src, self.src)});\n"
            # the same source table through its own replication slot: a job's scans of one
            # table are separate sources (no source reuse yet), and a slot has one reader
            f"CREATE TABLE src_log (id INT, k STRING, v BIGINT, ver BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
            f"WITH ({_cdc(pg, self.src, self.src + '_log')});\n"
            f"CREATE TABLE agg (k STRING, c BIGINT, s DECIMAL(38, 0), PRIMARY KEY (k) NOT ENFORCED) "
            f"WITH ({_jdbc(pg, self.agg)});\n"
            f"CREATE TABLE log (op STRING, id INT, k STRING, v BIGINT, ver BIGINT) WITH ({_jdbc(pg, self.log)});\n"
            "EXECUTE STATEMENT SET BEGIN\n"
            "INSERT INTO agg SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;\n"
            "INSERT INTO log SELECT * FROM TO_CHANGELOG(input => TABLE src_log);\n"
            "END;\n"
        )

    def change(self, con: object | None = None) -> None:
        """One transaction: an insert, update (a new version) or delete of `src`."""
        rng = self.rng
        own = con is None
        c = self.pg.connect(autocommit=False) if own else con
        try:
            with c.transaction():  # type: ignore[attr-defined]
                roll = rng.random()
                if self.next_id < 20 or roll < 0.45:
                    self.next_id += 1
                    i, v = self.next_id, rng.randrange(1000)
                    c.execute(f"INSERT INTO {self.src} VALUES (%s, %s, %s, 1)", (i, "k" + str(rng.randrange(8)), v))  # type: ignore[attr-defined]
                elif roll < 0.85:
                    i, v = rng.randrange(1, self.next_id + 1), rng.randrange(1000)
                    k = "k" + str(rng.randrange(8))
                    c.execute(f"UPDATE {self.src} SET v = %s, k = %s, ver = ver + 1 WHERE id = %s", (v, k, i))  # type: ignore[attr-defined]
                else:
                    i = rng.randrange(1, self.next_id + 1)
                    c.execute(f"DELETE FROM {self.src} WHERE id = %s", (i,))  # type: ignore[attr-defined]
        finally:
            if own:
                c.close()  # type: ignore[attr-defined]

    def writer(self, n: int, pause: float) -> threading.Thread:
        def run() -> None:
            with self.pg.connect(autocommit=False) as con:
                for _ in range(n):
                    self.change(con)
                    time.sleep(pause)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t

    def log_rows(self) -> list[tuple]:
        return self.pg.execute(f"SELECT op, id, k, v, ver FROM {self.log}")

    def problem(self) -> str | None:
        """What still differs from PostgreSQL's answer (None: the job's tables are right)."""
        expected = self.pg.execute(f"SELECT k, count(*), sum(v) FROM {self.src} GROUP BY k ORDER BY k")
        actual = self.pg.execute(f"SELECT k, c, s FROM {self.agg} ORDER BY k")
        if actual != expected:
            return f"agg {actual} != {expected}"
        return changelog_problem(self.log_rows(), self.pg.execute(f"SELECT id, k, v, ver FROM {self.src}"))

    def log_duplicates(self) -> list[tuple]:
        return self.pg.execute(f"SELECT op, id, ver, count(*) FROM {self.log} GROUP BY op, id, ver HAVING count(*) > 1")


def _start(job: Path, root: Path, *args: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "streamsql.cli", "-f", str(job), "--restore", "latest", *args]
    return subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _latest_checkpoint(root: Path) -> int:
    """The id of the newest completed checkpoint (with its `_metadata`) under `root/chk`, 0 if none."""
    return max((int(m.parent.name[4:]) for m in root.glob("chk/*/chk-*/_metadata")), default=0)


def _kill_at(proc: subprocess.Popen[bytes], root: Path, delay: float, after_checkpoint: bool) -> None:
    """SIGKILL the job `delay` seconds after its start or, with `after_checkpoint`, `delay`
    seconds after its first checkpoint completed (a run that restored, read and committed:
    what a wall-clock wait only gets with a margin for the slowest start-up); fails if the
    job ended by itself."""
    if after_checkpoint:  # (the job just started: it cannot have completed a checkpoint yet)
        before, deadline = _latest_checkpoint(root), time.monotonic() + 300
        while _latest_checkpoint(root) <= before:
            assert proc.poll() is None and time.monotonic() < deadline, "the job completed no checkpoint"
            time.sleep(0.02)
    try:
        proc.wait(delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    assert proc.returncode == -9, f"the job ended ({proc.returncode}):\n{err.decode()[-4000:]}"


def _converge(t: _Tables, proc: subprocess.Popen[bytes], stall: float = 180) -> None:
    """Wait until the job's tables equal PostgreSQL's answer (the job never ends: CDC).
    Fails when the difference stops changing for `stall` seconds (no progress), not after
    a fixed time: a loaded machine catches up later, not never."""
    deadline = time.monotonic() + stall
    last: str | None = None
    try:
        while True:
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"the job ended ({proc.returncode}):\n{err.decode()[-4000:]}")
            problem = t.problem()
            if problem is None:
                return
            assert not t.log_duplicates(), "a change was appended twice"
            if problem != last:
                last, deadline = problem, time.monotonic() + stall
            if time.monotonic() > deadline:
                raise AssertionError(f"no convergence (no progress for {stall:.0f} s): {problem}")
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()


def test_cdc_group_by_into_jdbc_upsert_equals_postgres(postgres_server: PostgresServer, tmp_path: Path) -> None:
    t = _Tables(postgres_server, tmp_path)
    proc = _start(t.job, tmp_path)
    deadline = time.monotonic() + 300
    while not t.log_rows():  # the snapshot is committed: the writer's changes are streamed
        assert proc.poll() is None and time.monotonic() < deadline, "the job wrote no snapshot"
        time.sleep(0.1)
    writer = t.writer(300, 0.005)
    writer.join()
    _converge(t, proc)
    ops = {op for op, *_ in t.log_rows()}
    assert ops == {"INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"}


@pytest.mark.timeout(1200)  # many job runs: no wall-clock bound decides the result, only a hang fails it
def test_cdc_job_killed_10_times_is_exactly_once(postgres_server: PostgresServer, tmp_path: Path) -> None:
    t = _Tables(postgres_server, tmp_path)
    writer = t.writer(600, 0.01)
    rng = random.Random(11)
    kills = 0
    for i in range(KILLS):
        # every third kill at a random wall-clock moment from the start (start-up, restore,
        # snapshot), the others at a random moment after the run's first checkpoint
        wall = i % 3 == 1
        delay = rng.uniform(0.3, 1.5) if wall else rng.uniform(0.0, 0.6)
        _kill_at(_start(t.job, tmp_path), tmp_path, delay, after_checkpoint=not wall)
        kills += 1
        assert not t.log_duplicates(), "a change was appended twice"
    writer.join()
    _converge(t, _start(t.job, tmp_path))
    assert kills == KILLS
    assert len(t.log_rows()) >= 100 and not t.log_duplicates()


@pytest.mark.timeout(1200)  # many job runs: no wall-clock bound decides the result, only a hang fails it
def test_cdc_job_at_parallelism_2_killed_and_restored(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """The slot is read by one subtask; the others aggregate and write; checkpoint
    completion reaches the reader in its worker process."""
    t = _Tables(postgres_server, tmp_path)
    writer = t.writer(300, 0.005)
    for delay in (0.0, 0.5, 0.25):  # after each run's first checkpoint: every run restores and makes progress
        _kill_at(_start(t.job, tmp_path, "--parallelism", "2"), tmp_path, delay, after_checkpoint=True)
        assert not t.log_duplicates(), "a change was appended twice"
    writer.join()
    _converge(t, _start(t.job, tmp_path, "--parallelism", "2"))
    assert len(t.log_rows()) >= 100 and not t.log_duplicates()


def test_batch_mode_reads_the_snapshot_with_startup_mode_snapshot(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    src = pg.new_name("snap")
    pg.execute(f"CREATE TABLE {src} (id int PRIMARY KEY, k text, v bigint)")
    pg.execute(f"ALTER TABLE {src} REPLICA IDENTITY FULL")
    pg.execute(f"INSERT INTO {src} SELECT i, 'k' || (i % 3), i FROM generate_series(1, 30) i")
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE s (id INT, k STRING, v BIGINT, tbl STRING METADATA FROM 'table_name' VIRTUAL, "
        f"kind STRING METADATA FROM 'row_kind' VIRTUAL, PRIMARY KEY (id) NOT ENFORCED) WITH ({_cdc(pg, src, src)})"
    )
    # the issue: postgres-cdc in batch mode reads the snapshot only ('initial' stops after it)
    assert len(list(env.execute_sql("SELECT * FROM s").collect())) == 30
    env.execute_sql("ALTER TABLE s SET ('scan.startup.mode' = 'snapshot')")
    rows = sorted(
        tuple(r) for r in env.execute_sql("SELECT k, COUNT(*), SUM(v), MAX(tbl), MAX(kind) FROM s GROUP BY k").collect()
    )
    assert rows == [
        (k, n, s, src, "+I") for k, n, s in pg.execute(f"SELECT k, count(*), sum(v) FROM {src} GROUP BY k ORDER BY k")
    ]


def test_tables_without_key_or_full_identity_are_refused(postgres_server: PostgresServer) -> None:
    pg = postgres_server
    nokey, partial = pg.new_name("nokey"), pg.new_name("partial")
    pg.execute(f"CREATE TABLE {nokey} (id int, v int)")
    pg.execute(f"CREATE TABLE {partial} (id int PRIMARY KEY, v int)")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(f"CREATE TABLE a (id INT, v INT) WITH ({_cdc(pg, nokey, nokey)})")
    with pytest.raises(SqlError, match=f"'public.{nokey}' has no PRIMARY KEY"):
        env.explain_sql("SELECT * FROM a")
    env.execute_sql(f"CREATE TABLE b (id INT, v INT) WITH ({_cdc(pg, partial, partial)})")
    with pytest.raises(SqlError, match="REPLICA IDENTITY FULL"):
        env.explain_sql("SELECT * FROM b")


def test_changelog_check_finds_duplicates_gaps_and_wrong_ends() -> None:
    """The exactly-once check above fails on each way a changelog can be wrong."""
    log = [
        ("INSERT", 1, "a", 1, 1),
        ("UPDATE_BEFORE", 1, "a", 1, 1),
        ("UPDATE_AFTER", 1, "b", 2, 2),
        ("INSERT", 2, "a", 5, 3),  # read by the snapshot at version 3
        ("DELETE", 2, "a", 5, 3),
    ]
    final = [(1, "b", 2, 2)]
    assert changelog_problem(log, final) is None
    assert "twice" in str(changelog_problem([*log, log[2]], final))
    assert "missing" in str(changelog_problem([r for r in log if r[0] != "UPDATE_BEFORE"], final))
    assert "does not carry" in str(changelog_problem([*log[:1], ("UPDATE_BEFORE", 1, "z", 1, 1), *log[2:]], final))
    assert "ends in" in str(changelog_problem(log, [(1, "b", 3, 2)]))
    assert "ends in" in str(changelog_problem(log[:4], final))  # the DELETE is lost
    assert "INSERTs" in str(changelog_problem(log, [*final, (3, "c", 1, 1)]))


def test_two_scans_of_one_slot_are_refused(postgres_server: PostgresServer) -> None:
    """Each scan is its own source: two on one slot would each consume part of the changes."""
    pg = postgres_server
    src = pg.new_name("twice")
    pg.execute(f"CREATE TABLE {src} (id int PRIMARY KEY, v int)")
    pg.execute(f"ALTER TABLE {src} REPLICA IDENTITY FULL")
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.execute_sql(f"CREATE TABLE a (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({_cdc(pg, src, src)})")
    env.execute_sql(f"CREATE TABLE b (id INT, v INT, PRIMARY KEY (id) NOT ENFORCED) WITH ({_cdc(pg, src, src + '_b')})")
    env.execute_sql("CREATE TABLE out (id INT, v INT) WITH ('connector' = 'blackhole')")
    twice = f"scans 'default_catalog.default_database.a' twice through the same replication slot '{src}'"
    with pytest.raises(SqlError, match=twice):
        env.compile_plan_sql("INSERT INTO out SELECT * FROM a UNION ALL SELECT * FROM a")
    env.compile_plan_sql("INSERT INTO out SELECT * FROM a UNION ALL SELECT * FROM b")  # a slot each
