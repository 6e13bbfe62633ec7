"""postgres-cdc against a real PostgreSQL server (tests/servers/postgres.py).

A writer thread runs inserts, updates and deletes on a source table while a `streamsql`
job (the real CLI) keeps `SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k` in a jdbc upsert
table. The writer also appends one row per change to an outbox table in the same
transaction; a second postgres-cdc source carries the outbox into an append-mode jdbc
table, so that table must hold every change exactly once. The final tables must equal
what PostgreSQL computes itself — once for an uninterrupted job, and once for a job
killed with SIGKILL at 10 random moments and resumed each time with `--restore latest`.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import threading
import time
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


class _Tables:
    """The source, outbox and result tables of one scenario, and its job file."""

    def __init__(self, pg: PostgresServer, root: Path) -> None:
        self.pg = pg
        self.src, self.outbox = pg.new_name("src"), pg.new_name("outbox")
        self.agg, self.log = pg.new_name("agg"), pg.new_name("log")
        pg.execute(f"CREATE TABLE {self.src} (id int PRIMARY KEY, k text NOT NULL, v bigint)")
        pg.execute(f"ALTER TABLE {self.src} REPLICA IDENTITY FULL")
        pg.execute(f"CREATE TABLE {self.outbox} (seq bigserial PRIMARY KEY, id int, op text, v bigint)")
        pg.execute(f"ALTER TABLE {self.outbox} REPLICA IDENTITY FULL")
        pg.execute(f"CREATE TABLE {self.agg} (k text PRIMARY KEY, c bigint, s numeric)")
        pg.execute(f"CREATE TABLE {self.log} (seq bigint, id int, op text, v bigint)")
        self.rng = random.Random(f"{self.src}")
        self.next_id = 0
        for _ in range(200):  # rows the snapshot reads
            self.change()
        self.job = root / "job.sql"
        self.job.write_text(
            "SET 'execution.checkpointing.interval' = '200 ms';\n"
            f"SET 'execution.checkpointing.dir' = 'file://{root}/chk';\n"
            f"CREATE TABLE src (id INT, k STRING, v BIGINT, PRIMARY KEY (id) NOT ENFORCED) "
            f"WITH ({_cdc(pg, self.src, self.src)});\n"
            f"CREATE TABLE outbox (seq BIGINT, id INT, op STRING, v BIGINT, PRIMARY KEY (seq) NOT ENFORCED) "
            f"WITH ({_cdc(pg, self.outbox, self.outbox)});\n"
            f"CREATE TABLE agg (k STRING, c BIGINT, s DECIMAL(38, 0), PRIMARY KEY (k) NOT ENFORCED) "
            f"WITH ({_jdbc(pg, self.agg)});\n"
            f"CREATE TABLE log (seq BIGINT, id INT, op STRING, v BIGINT) WITH ({_jdbc(pg, self.log)});\n"
            "EXECUTE STATEMENT SET BEGIN\n"
            "INSERT INTO agg SELECT k, COUNT(*), SUM(v) FROM src GROUP BY k;\n"
            "INSERT INTO log SELECT seq, id, op, v FROM outbox;\n"
            "END;\n"
        )

    def change(self, con: object | None = None) -> None:
        """One transaction: an insert, update or delete of `src` and its outbox row."""
        rng = self.rng
        own = con is None
        c = self.pg.connect(autocommit=False) if own else con
        try:
            with c.transaction():  # type: ignore[attr-defined]
                roll = rng.random()
                if self.next_id < 20 or roll < 0.45:
                    self.next_id += 1
                    i, v = self.next_id, rng.randrange(1000)
                    c.execute(f"INSERT INTO {self.src} VALUES (%s, %s, %s)", (i, "k" + str(rng.randrange(8)), v))  # type: ignore[attr-defined]
                    c.execute(f"INSERT INTO {self.outbox} (id, op, v) VALUES (%s, 'I', %s)", (i, v))  # type: ignore[attr-defined]
                elif roll < 0.85:
                    i, v = rng.randrange(1, self.next_id + 1), rng.randrange(1000)
                    k = "k" + str(rng.randrange(8))
                    c.execute(f"UPDATE {self.src} SET v = %s, k = %s WHERE id = %s", (v, k, i))  # type: ignore[attr-defined]
                    c.execute(f"INSERT INTO {self.outbox} (id, op, v) VALUES (%s, 'U', %s)", (i, v))  # type: ignore[attr-defined]
                else:
                    i = rng.randrange(1, self.next_id + 1)
                    c.execute(f"DELETE FROM {self.src} WHERE id = %s", (i,))  # type: ignore[attr-defined]
                    c.execute(f"INSERT INTO {self.outbox} (id, op, v) VALUES (%s, 'D', NULL)", (i,))  # type: ignore[attr-defined]
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

    def expected(self) -> tuple[list[tuple], list[tuple]]:
        agg = self.pg.execute(f"SELECT k, count(*), sum(v) FROM {self.src} GROUP BY k ORDER BY k")
        log = self.pg.execute(f"SELECT seq, id, op, v FROM {self.outbox} ORDER BY seq")
        return agg, log

    def actual(self) -> tuple[list[tuple], list[tuple]]:
        agg = self.pg.execute(f"SELECT k, c, s FROM {self.agg} ORDER BY k")
        log = self.pg.execute(f"SELECT seq, id, op, v FROM {self.log} ORDER BY seq")
        return agg, log

    def log_duplicates(self) -> list[tuple]:
        return self.pg.execute(f"SELECT seq, count(*) FROM {self.log} GROUP BY seq HAVING count(*) > 1")


def _start(job: Path, root: Path, *args: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "streamsql.cli", "-f", str(job), "--restore", "latest", *args]
    return subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _converge(t: _Tables, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    """Wait until the job's tables equal PostgreSQL's answer (the job never ends: CDC)."""
    deadline = time.monotonic() + timeout
    try:
        while True:
            if proc.poll() is not None:
                out, err = proc.communicate()
                raise AssertionError(f"the job ended ({proc.returncode}):\n{err.decode()[-4000:]}")
            if t.actual() == t.expected():
                return
            assert not t.log_duplicates(), "a change was appended twice"
            if time.monotonic() > deadline:
                exp, act = t.expected(), t.actual()
                raise AssertionError(
                    f"no convergence: agg {act[0]} != {exp[0]}; log {len(act[1])} rows vs {len(exp[1])}"
                )
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()


def test_cdc_group_by_into_jdbc_upsert_equals_postgres(postgres_server: PostgresServer, tmp_path: Path) -> None:
    t = _Tables(postgres_server, tmp_path)
    proc = _start(t.job, tmp_path)
    writer = t.writer(300, 0.005)
    writer.join()
    _converge(t, proc)
    agg, log = t.actual()
    assert len(agg) == 8 and len(log) == 500


def test_cdc_job_killed_10_times_is_exactly_once(postgres_server: PostgresServer, tmp_path: Path) -> None:
    t = _Tables(postgres_server, tmp_path)
    writer = t.writer(600, 0.01)
    rng = random.Random(11)
    kills = 0
    for _ in range(KILLS):
        proc = _start(t.job, tmp_path)
        try:
            proc.wait(rng.uniform(1.5, 3.5))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode == -9, f"the job ended ({proc.returncode}):\n{err.decode()[-4000:]}"
        kills += 1
        assert not t.log_duplicates(), "a change was appended twice"
    writer.join()
    _converge(t, _start(t.job, tmp_path))
    assert kills == KILLS
    agg, log = t.actual()
    assert len(log) == 800 and not t.log_duplicates()


def test_cdc_job_at_parallelism_2_killed_and_restored(postgres_server: PostgresServer, tmp_path: Path) -> None:
    """The slot is read by one subtask; the others aggregate and write; checkpoint
    completion reaches the reader in its worker process."""
    t = _Tables(postgres_server, tmp_path)
    writer = t.writer(300, 0.005)
    for wait in (3.0, 4.0, 3.5):
        proc = _start(t.job, tmp_path, "--parallelism", "2")
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode == -9, f"the job ended ({proc.returncode}):\n{err.decode()[-4000:]}"
        assert not t.log_duplicates(), "a change was appended twice"
    writer.join()
    _converge(t, _start(t.job, tmp_path, "--parallelism", "2"))
    assert len(t.actual()[1]) == 500


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
