"""REST API of a job process (rest.port) and of `streamsql serve`, against a live server on
127.0.0.1; schemathesis fuzzes the OpenAPI document against it (bounded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from streamsql.environment import TableEnvironment
from streamsql.rest.server import ApiError, RestConfigError, RestServer, resolve_token

DDL = """
CREATE TABLE src (k INT, v BIGINT, ts AS LOCALTIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
  WITH ('connector' = 'datagen', 'rows-per-second' = '2000', 'fields.k.min' = '1', 'fields.k.max' = '5');
CREATE TABLE snk (k INT, c BIGINT, ws TIMESTAMP(3)) WITH ('connector' = 'blackhole');
"""
INSERT = (
    "INSERT INTO snk SELECT k, COUNT(*), window_start FROM TABLE(TUMBLE(TABLE src, DESCRIPTOR(ts), "
    "INTERVAL '1' SECOND)) GROUP BY k, window_start, window_end"
)


def call(url: str, method: str = "GET", body: Any = None, token: str | None = None) -> tuple[int, Any]:
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    if body is not None:
        req.add_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/plain")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw = resp.read()
            ctype = resp.headers.get("Content-Type", "")
            return resp.status, json.loads(raw) if "json" in ctype else raw.decode()
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def wait_for(pred: Any, timeout: float = 300.0) -> Any:
    """`pred()` once truthy; the generous timeout only fails a condition never reached."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("condition not reached in time")


@pytest.fixture
def job_env(tmp_path: Path) -> Any:
    env = TableEnvironment.create(
        {
            "rest.port": "0",
            "execution.checkpointing.interval": "300 ms",
            "execution.checkpointing.dir": str(tmp_path / "chk"),
            "execution.checkpointing.savepoint-dir": str(tmp_path / "savepoints"),
            "rest.allow-submit": "true",
        }
    )
    env.execute_sql(DDL)
    result = env.execute_sql(INSERT)
    job = result.job
    yield env, env._rest_server.url, job
    job.cancel()
    job.join(60)
    env._rest_server.shutdown()


def test_job_process_serves_flink_paths(job_env: Any) -> None:
    env, base, job = job_env
    jid = job.get_job_id()
    status, ov = call(base + "overview")
    assert status == 200 and ov["jobs-running"] == 1 and ov["taskmanagers"] == 1
    _, jobs = call(base + "jobs/overview")
    assert [j["jid"] for j in jobs["jobs"]] == [jid] and jobs["jobs"][0]["state"] == "RUNNING"
    detail = wait_for(lambda: (d := call(base + f"jobs/{jid}")[1])["vertices"] and d)
    ops = [v["operator"] for v in detail["vertices"]]
    assert ops[0] == "TableSourceScan" and "WindowAggregate" in ops and ops[-1] == "Sink"
    assert {n["id"] for n in detail["plan"]["nodes"]} == {v["id"] for v in detail["vertices"]}
    sink = detail["plan"]["nodes"][-1]
    assert sink["inputs"] and sink["inputs"][0]["id"] == detail["vertices"][-2]["id"]
    # Counters move, rates and watermarks show up.
    agg = next(v for v in detail["vertices"] if v["operator"] == "WindowAggregate")
    first = agg["metrics"]["numRecordsIn"]
    wait_for(lambda: call(base + f"jobs/{jid}/vertices/{agg['id']}")[1]["numRecordsIn"] > first)
    assert wait_for(lambda: call(base + f"jobs/{jid}/vertices/{agg['id']}")[1]["numRecordsInPerSecond"] > 0)
    assert wait_for(lambda: call(base + f"jobs/{jid}/vertices/{agg['id']}")[1]["currentInputWatermark"] > 0)
    _, ids = call(base + f"jobs/{jid}/vertices/{agg['id']}/metrics")
    assert {"id": "busyTimeMsPerSecond"} in ids and {"id": "numLateRecordsDropped"} in ids
    _, vals = call(base + f"jobs/{jid}/vertices/{agg['id']}/metrics?get=numRecordsIn,currentInputWatermark")
    assert [v["id"] for v in vals] == ["numRecordsIn", "currentInputWatermark"] and int(vals[0]["value"]) > 0
    assert call(base + f"jobs/{jid}/vertices/nope/metrics")[0] == 404
    assert call(base + "jobs/0123/checkpoints")[0] == 404


def test_checkpoints_metrics_and_stop_with_savepoint(job_env: Any, tmp_path: Path) -> None:
    env, base, job = job_env
    jid = job.get_job_id()
    cp = wait_for(lambda: (d := call(base + f"jobs/{jid}/checkpoints")[1])["counts"]["completed"] >= 2 and d)
    done = [h for h in cp["history"] if h["status"] == "COMPLETED"]
    assert done[0]["id"] > done[-1]["id"]  # newest first
    assert all(h["state_size"] > 0 and h["external_path"] and h["checkpoint_type"] == "CHECKPOINT" for h in done)
    assert cp["latest"]["completed"]["id"] == done[0]["id"]
    status, text = call(base + "metrics")
    assert status == 200
    assert f'streamsql_operator_records_out_total{{job_id="{jid}"' in text
    assert 'streamsql_jobs{state="RUNNING"} 1' in text
    # Stop with a savepoint (Flink's POST /jobs/:id/stop), then poll the operation.
    sp_dir = tmp_path / "savepoints"
    status, trig = call(base + f"jobs/{jid}/stop", "POST", {"drain": False, "targetDirectory": str(sp_dir)})
    assert status == 202
    op = wait_for(
        lambda: (
            (d := call(base + f"jobs/{jid}/savepoints/{trig['request-id']}")[1])["status"]["id"] == "COMPLETED" and d
        )
    )
    location = op["operation"]["location"]
    assert location and Path(location, "_metadata").is_file()
    assert wait_for(lambda: call(base + f"jobs/{jid}")[1]["state"] == "FINISHED")  # as in Flink after stop
    cp = call(base + f"jobs/{jid}/checkpoints")[1]
    assert cp["latest"]["savepoint"]["external_path"] == location


def test_token_required_off_loopback_and_checked(tmp_path: Path) -> None:
    env = TableEnvironment.create()
    with pytest.raises(RestConfigError, match="token"):
        RestServer(env, 0, host="0.0.0.0")
    server = RestServer(env, 0, token="s3cret").start()
    try:
        assert call(server.url + "overview")[0] == 401
        assert call(server.url + "overview", token="wrong")[0] == 401
        assert call(server.url + "overview", token="s3cret")[0] == 200
    finally:
        server.shutdown()


def _serve(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamsql.cli", "serve", "--port", "0", *extra],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "REST API and dashboard at" in line, line
    return proc, line.rsplit(" ", 1)[-1].strip()


def test_serve_submits_sql_jobs_and_runs_schemathesis(tmp_path: Path) -> None:
    proc, base = _serve(tmp_path, "--allow-submit")
    try:
        status, doc = call(base + "jobs", "POST", {"sql": DDL + INSERT + ";"})
        assert status == 200 and doc["jobids"] == [doc["jobid"]]
        jid = doc["jobid"]
        assert call(base + f"jobs/{jid}")[1]["state"] == "RUNNING"
        status, err = call(base + "jobs", "POST", {"sql": "SELEC 1"})
        assert status == 400 and err["errors"]
        assert call(base + "jobs", "POST", {"sql": "SELECT 1"})[0] == 400  # queries are not jobs
        assert call(base + "overview", "PUT", {})[0] == 405
        st = shutil.which("st") or shutil.which("schemathesis")
        if st is None:
            pytest.skip("schemathesis is not installed (pip install -e '.[test]')")
        run = subprocess.run(
            [st, "run", base + "openapi.json", "-n", "5", "--phases", "examples,coverage,fuzzing"]
            + ["--generation-deterministic", "--exclude-checks", "positive_data_acceptance"],
            capture_output=True,
            text=True,
            timeout=240,
            cwd=tmp_path,
        )
        assert run.returncode == 0, run.stdout[-4000:]
        # The job's operations are checked (schemathesis found its id through GET /jobs).
        assert "Tested: 15" in run.stdout or "Tested:" in run.stdout
    finally:
        proc.terminate()
        proc.wait(60)


def test_cli_rest_port_flag(tmp_path: Path) -> None:
    """`streamsql --rest-port` serves the job process's jobs while its script runs."""
    script = tmp_path / "job.sql"
    script.write_text(DDL + INSERT + ";\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamsql.cli", "--rest-port", "0", "-f", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "REST API and dashboard: http://127.0.0.1:" in line
        base = line.rsplit(" ", 1)[-1].strip()
        jobs = wait_for(lambda: call(base + "jobs/overview")[1]["jobs"])
        assert jobs[0]["state"] == "RUNNING"
        status, _ = call(base + f"jobs/{jobs[0]['jid']}", "PATCH")
        assert status == 202
        assert proc.wait(300) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


# ------------------------------------------------------------------ attacks (issue: trust)
def _raw(port: int, request: bytes) -> tuple[int, bytes]:
    """Send raw bytes to the server (headers an HTTP client would not let us forge) and
    return the status and body."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.fixture
def plain_server() -> Any:
    """A default server: loopback, no token, submission off."""
    env = TableEnvironment.create({})
    server = RestServer(env, 0, max_body_bytes=4096).start()
    yield server
    server.shutdown()


def test_huge_bodies_are_refused_unread_and_never_echoed(plain_server: Any) -> None:
    port = plain_server.port
    status, body = _raw(
        port,
        b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100000000000\r\n\r\n{",
    )
    assert status == 413 and b"rest.max-body-bytes" in body
    big = json.dumps({"sql": "X" * 10_000}).encode()
    status, body = _raw(
        port,
        b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(big)}\r\n\r\n".encode()
        + big,
    )
    assert status == 413 and b"XXXX" not in body and len(body) < 1000
    status, _ = _raw(port, b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n")
    assert status == 400
    status, _ = _raw(port, b"POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    assert status == 411


def test_body_cap_is_configurable_and_bodies_are_json_only(tmp_path: Path) -> None:
    env = TableEnvironment.create({})
    server = RestServer(env, 0, allow_submit=True, max_body_bytes=64).start()
    try:
        assert (
            call(server.url + "jobs", "POST", {"sql": "CREATE TABLE t (a INT) WITH ('connector' = 'blackhole')"})[0]
            == 413
        )
        assert call(server.url + "jobs", "POST", b"SELECT 1")[0] == 415  # text/plain: a CSRF-able body
        status, err = call(server.url + "jobs", "POST", {"sql": "SELEC 1"})
        assert status == 400 and err["errors"]
    finally:
        server.shutdown()


def test_host_and_origin_must_name_the_server(plain_server: Any) -> None:
    port = plain_server.port
    ok = f"GET /overview HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    assert _raw(port, ok)[0] == 200
    assert _raw(port, ok.replace(b"127.0.0.1", b"localhost"))[0] == 200
    rebinding = f"GET /overview HTTP/1.1\r\nHost: evil.example:{port}\r\nConnection: close\r\n\r\n".encode()
    assert _raw(port, rebinding)[0] == 403
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{port + 1}"):
        req = f"GET /overview HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\nConnection: close\r\n\r\n"
        assert _raw(port, req.encode())[0] == 403, origin
    same = f"GET /overview HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    assert _raw(port, same.encode())[0] == 200


def test_submission_and_target_directories_are_off_without_token_or_allow_submit(
    plain_server: Any, tmp_path: Path
) -> None:
    status, err = call(plain_server.url + "jobs", "POST", {"sql": "SELECT 1"})
    assert status == 403 and "--allow-submit" in err["errors"][0]
    env = TableEnvironment.create({"execution.checkpointing.savepoint-dir": str(tmp_path / "sp")})
    server = RestServer(env, 0, allow_submit=True)
    try:
        assert server.savepoint_target(str(tmp_path / "sp" / "a")) == str(tmp_path / "sp" / "a")
        assert server.savepoint_target("rel") == "rel"
        for bad in ("/etc", str(tmp_path / "sp" / ".." / "x"), str(tmp_path), "s3://bucket/x"):
            with pytest.raises(ApiError) as e:
                server.savepoint_target(bad)
            assert e.value.status == 403
    finally:
        server.httpd.server_close()
    locked = RestServer(env, 0)
    try:
        with pytest.raises(ApiError, match="allow-submit"):
            locked.savepoint_target(str(tmp_path / "sp" / "a"))
    finally:
        locked.httpd.server_close()


def test_token_from_file_or_environment_and_only_in_the_header(tmp_path: Path, monkeypatch: Any) -> None:
    (tmp_path / "tok").write_text("fromfile\n")
    assert resolve_token(None, str(tmp_path / "tok")) == "fromfile"
    monkeypatch.setenv("STREAMSQL_REST_TOKEN", "fromenv")
    assert resolve_token(None, None) == "fromenv"
    with pytest.raises(RestConfigError, match="token file"):
        resolve_token(None, str(tmp_path / "missing"))
    env = TableEnvironment.create({})
    server = RestServer(env, 0, host="0.0.0.0", token=resolve_token(None, None)).start()
    try:
        local = f"http://127.0.0.1:{server.port}/"
        assert call(local + "overview?token=fromenv")[0] == 401  # never in the URL
        assert call(local + "overview", token="fromenv")[0] == 200
        assert call(local + "openapi.json")[0] == 200  # the API description is public
        # a token makes submission available
        assert call(local + "jobs", "POST", {"sql": "SELECT 1"}, token="fromenv")[0] == 400
    finally:
        server.shutdown()


def test_public_bind_without_token_is_refused_before_any_statement(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    script = tmp_path / "job.sql"
    script.write_text(
        f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = '{marker}', 'format' = 'csv');\n"
        "INSERT INTO t VALUES (1);\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "STREAMSQL_REST_TOKEN"}
    p = subprocess.run(
        [sys.executable, "-m", "streamsql.cli", "--rest-port", "0", "--host", "0.0.0.0", "-f", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert p.returncode != 0
    assert "not a loopback address" in p.stderr and "Internal error" not in p.stderr
    assert not marker.exists()
    serve = subprocess.run(
        [sys.executable, "-m", "streamsql.cli", "serve", "--port", "0", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert serve.returncode == 1 and "not a loopback address" in serve.stderr


def test_a_failed_job_s_exception_names_the_failing_python_function() -> None:
    from streamsql import DataTypes
    from streamsql.udf import udf

    def sboom(v: int) -> int:
        if v == 3:
            raise ValueError("no threes here")  # the user's line
        return v

    env = TableEnvironment.create({})
    env.create_temporary_function("sboom", udf(sboom, result_type=DataTypes.BIGINT()))
    env.execute_sql("CREATE TABLE snk (x BIGINT) WITH ('connector' = 'blackhole')")
    server = RestServer(env, 0, allow_submit=True).start()
    try:
        base = server.url
        status, sub = call(
            base + "jobs", "POST", {"sql": "INSERT INTO snk SELECT sboom(x) FROM (VALUES (1), (3)) t(x)"}
        )
        assert status == 200, sub
        jid = sub["jobid"]
        wait_for(lambda: call(base + f"jobs/{jid}")[1]["state"] == "FAILED")
        status, doc = call(base + f"jobs/{jid}/exceptions")
        assert status == 200
        [entry] = doc["exceptionHistory"]["entries"]
        assert entry["exceptionName"] == "runtime.errors.UserFunctionError"
        text = entry["stacktrace"]
        assert text.startswith("UserFunctionError: The Python function 'sboom' failed on a row: ValueError: no threes")
        assert f'File "{os.path.abspath(__file__)}"' in text and "# the user's line" in text
        assert call(base + "jobs/0123/exceptions")[0] == 404
    finally:
        server.shutdown()
