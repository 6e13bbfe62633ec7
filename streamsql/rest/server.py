"""The REST server (Flink's Dispatcher REST endpoint, for one TableEnvironment) and the
dashboard page, on the standard library's ThreadingHTTPServer.

Served by a job process when `rest.port` is set and by `streamsql serve`, with the same
rules (docs/rest.md, Security):

- binds to 127.0.0.1 by default; binding anywhere else requires a token, taken from
  `--token-file` / `rest.token-file`, `$STREAMSQL_REST_TOKEN` or `rest.token`, and accepted
  only in the `Authorization: Bearer <token>` header;
- the `Host` header must name the bound address (or, on loopback, a loopback name) and an
  `Origin` header, when sent, that same address and port: DNS rebinding and cross-site
  requests from a web page are refused (403);
- request bodies are capped (`rest.max-body-bytes`, 413 beyond), must be JSON
  (`Content-Type: application/json`, else 415) and are never echoed back;
- what runs SQL or writes files (`POST /jobs`, savepoint target directories) is off on a
  server without a token unless enabled (`--allow-submit` / `rest.allow-submit`), and a
  target directory must lie inside the savepoint root (`execution.checkpointing.savepoint-dir`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import posixpath
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlparse

from runtime.checkpoint.options import SAVEPOINT_DIR
from runtime.errors import ConfigError
from streamsql.rest import views
from streamsql.rest.monitor import Sampler
from streamsql.rest.options import ALLOW_SUBMIT, BIND_ADDRESS, MAX_BODY_BYTES, PORT, TOKEN, TOKEN_FILE

_STATIC_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "application/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".yaml": "application/yaml",
}


DEFAULT_MAX_BODY_BYTES = MAX_BODY_BYTES.get(None)
TOKEN_ENV = "STREAMSQL_REST_TOKEN"
MAX_ERROR_CHARS = 2000  # an error message never carries more than this (no body echo)
# Served without a token: the dashboard page and the API description hold no job data.
_PUBLIC = frozenset({"index.html", "openapi.json"})


class RestConfigError(ValueError):
    """The server cannot start as configured (e.g. a public address without a token)."""


def resolve_token(token: str | None = None, token_file: str | None = None) -> str | None:
    """The bearer token: given directly, else read from `token_file` (first line), else
    from $STREAMSQL_REST_TOKEN; None when there is none."""
    if token:
        return token
    if token_file:
        try:
            with open(os.path.expanduser(token_file), encoding="utf-8") as fh:
                value = fh.readline().strip()
        except (OSError, UnicodeDecodeError) as e:
            raise RestConfigError(f"cannot read the REST token file '{token_file}': {e}") from None
        if not value:
            raise RestConfigError(f"the REST token file '{token_file}' is empty")
        return value
    return os.environ.get(TOKEN_ENV) or None


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback bind address without a token (before anything else runs)."""
    if not is_loopback(host) and not token:
        raise RestConfigError(
            f"the REST server binds to {host}, which is not a loopback address: set a token "
            f"(--token-file / 'rest.token-file', ${TOKEN_ENV}, or 'rest.token'); clients then send "
            "'Authorization: Bearer <token>'"
        )


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ApiError(Exception):
    def __init__(self, status: int, message: str, allow: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.allow = allow


def allowed_methods(parts: list[str]) -> str:
    """The Allow header of a path (405 answers)."""
    if parts == ["jobs"]:
        return "GET, HEAD, POST"
    if len(parts) == 2 and parts[0] == "jobs" and parts[1] != "overview":
        return "GET, HEAD, PATCH"
    if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "stop":
        return "POST, PATCH"
    if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "savepoints":
        return "POST"
    return "GET, HEAD"


class RestServer:
    """`RestServer(env, port, host, token).start()`: serves env's jobs on a daemon thread."""

    def __init__(
        self,
        env: Any,
        port: int = 8081,
        host: str = "127.0.0.1",
        token: str | None = None,
        allow_submit: bool = False,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        check_bind(host, token)
        if max_body_bytes < 0:
            raise RestConfigError(f"'rest.max-body-bytes' must not be negative (got {max_body_bytes})")
        self.env = env
        self.token = token or None
        # SQL and file-writing endpoints: with a token, or when the user enabled them
        self.submit_enabled = bool(self.token) or allow_submit
        self.max_body_bytes = max_body_bytes
        self.sampler = Sampler()
        self.operations: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"rest": self})
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.httpd.daemon_threads = True
        self.host = host
        self.port = int(self.httpd.server_address[1])
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ request checks
    def host_allowed(self, host_header: str | None) -> bool:
        """The Host header names this server (DNS rebinding: a foreign name is refused). A
        wildcard bind (0.0.0.0, ::) accepts any name: it always has a token."""
        if host_header is None:
            return True  # HTTP/1.0
        name = _host_name(host_header)
        if self.host in ("0.0.0.0", "::"):
            return True
        if name == self.host.lower():
            return True
        return is_loopback(self.host) and is_loopback(name)

    def origin_allowed(self, origin: str | None) -> bool:
        """An Origin (sent by browsers on cross-site and POST requests) must be this server."""
        if origin is None:
            return True
        u = urlparse(origin)
        if u.scheme not in ("http", "https") or not u.hostname:
            return False  # "null" (sandboxed pages, file://) included
        port = u.port or (443 if u.scheme == "https" else 80)
        return port == self.port and self.host_allowed(u.netloc)

    def savepoint_target(self, directory: str) -> str:
        """`directory` if it lies inside the savepoint root, else ApiError 403."""
        if not self.submit_enabled:
            raise ApiError(403, _SUBMIT_OFF.format(what="writing savepoints to a target directory"))
        root = SAVEPOINT_DIR.get(self.env.get_config())
        if not root:
            raise ApiError(
                403,
                "savepoint target directories must lie inside the savepoint root "
                "('execution.checkpointing.savepoint-dir'), which is not set on this server",
            )
        if not isinstance(directory, str) or not directory.strip():
            raise ApiError(400, "the target directory must be a non-empty string")
        if not _inside(directory, str(root)):
            raise ApiError(403, f"the target directory is outside the savepoint root '{root}'")
        return directory

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def start(self) -> RestServer:
        self.sampler.start()
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="rest-server", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self.sampler.start()
        self.httpd.serve_forever()

    def shutdown(self) -> None:
        self.sampler.stop()
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ jobs
    def handles(self) -> list[Any]:
        handles = list(self.env.jobs.values())
        for h in handles:
            self.sampler.monitor(h)
        return handles

    def handle(self, job_id: str) -> Any:
        h = self.env.jobs.get(job_id)
        if h is None:
            raise ApiError(404, f"Job {job_id} not found")
        return h

    def submit(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /jobs: run a SQL script in the session; its INSERT statements become jobs."""
        from planner.errors import SqlError
        from planner.statements import InsertInto, Query, StatementSet

        if not self.submit_enabled:
            raise ApiError(403, _SUBMIT_OFF.format(what="submitting SQL"))
        sql = body.get("sql") if isinstance(body, dict) else None
        if not isinstance(sql, str) or not sql.strip():
            raise ApiError(400, "the request body needs a 'sql' string (a SQL script)")
        with self._lock:  # one script at a time changes the session
            try:
                statements = self.env.parse(sql)
                if any(isinstance(s, Query) for s in statements):
                    raise ApiError(400, "SELECT queries cannot be submitted as jobs; use INSERT INTO a sink")
                job_ids: list[str] = []
                for stmt in statements:
                    result = self.env.execute_statement(stmt)
                    job = result.job
                    if job is not None and isinstance(stmt, (InsertInto, StatementSet)):
                        job_ids.append(job.get_job_id())
                        self.sampler.monitor(job)
            except SqlError as e:
                raise ApiError(400, _clip(e.render())) from None
        return {"jobid": job_ids[-1] if job_ids else None, "jobids": job_ids}

    def stop(self, job_id: str, body: dict[str, Any], savepoint_only: bool = False) -> dict[str, Any]:
        """Stop (with a savepoint when a directory is given) or take a savepoint; async as in
        Flink: returns a request id, the outcome is at /jobs/:id/savepoints/:request-id."""
        h = self.handle(job_id)
        if savepoint_only:
            directory = body.get("target-directory") or body.get("targetDirectory")
            stop = bool(body.get("cancel-job", False))
        else:
            directory = body.get("targetDirectory") or body.get("target-directory")
            stop = True
        drain = stop and not savepoint_only and bool(body.get("drain", False))  # Flink's StopWithSavepointRequestBody
        if directory is not None:
            directory = self.savepoint_target(directory)
        if not h.is_running():
            raise ApiError(409, f"Job {job_id} is not running ({h.get_job_status()})")
        request_id = uuid.uuid4().hex
        op: dict[str, Any] = {"status": {"id": "IN_PROGRESS"}}
        self.operations[request_id] = op

        def run() -> None:
            try:
                if directory is None and not savepoint_only:
                    default = SAVEPOINT_DIR.get(self.env.get_config())
                    if not default:
                        h.cancel()
                        h.join(30)
                        op["operation"] = {"location": None}
                        op["status"] = {"id": "COMPLETED"}
                        return
                if stop:
                    path = h.stop_with_savepoint(directory, drain=drain)
                else:
                    path = h.trigger_savepoint(directory)
                op["operation"] = {"location": path}
            except Exception as e:  # noqa: BLE001 - reported through the operation
                op["operation"] = {"failure-cause": {"class": type(e).__name__, "stack-trace": str(e)}}
            op["status"] = {"id": "COMPLETED"}

        threading.Thread(target=run, name=f"savepoint-{request_id[:8]}", daemon=True).start()
        return {"request-id": request_id}


_SUBMIT_OFF = (
    "{what} is off on this server: it has no token, so any local process or web page could "
    "use it; start it with --allow-submit ('rest.allow-submit' = 'true') or give it a token "
    f"(--token-file, ${TOKEN_ENV})"
)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ... (truncated)"


def _host_name(netloc: str) -> str:
    """The host of a Host header / netloc, without port and IPv6 brackets, lower case."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0]
    if netloc.count(":") == 1:
        return netloc.split(":", 1)[0]
    return netloc


def _inside(directory: str, root: str) -> bool:
    """`directory` is `root` or below it (no `..` escape; local paths resolved)."""

    def local(p: str) -> str | None:
        if p.startswith("file://"):
            return p[len("file://") :]
        return None if "://" in p else p

    d, r = local(directory), local(root)
    if r is not None:
        if d is None:
            return False
        if not os.path.isabs(d):
            d = os.path.join(r, d)
        real_d, real_r = os.path.realpath(d), os.path.realpath(r)
        return real_d == real_r or real_d.startswith(real_r.rstrip("/") + "/")
    if d is not None or "/.." in directory or directory.split("://", 1)[0] != root.split("://", 1)[0]:
        return False
    nd = posixpath.normpath(directory.split("://", 1)[1])
    nr = posixpath.normpath(root.split("://", 1)[1])
    return nd == nr or nd.startswith(nr.rstrip("/") + "/")


class _Handler(BaseHTTPRequestHandler):
    rest: RestServer
    server_version = "streamsql-rest/1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return  # no access log on the job's terminal

    # ------------------------------------------------------------------ plumbing
    def _send(self, status: int, body: bytes, content_type: str, allow: str | None = None) -> None:
        self.send_response(status)
        if allow:
            self.send_header("Allow", allow)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc: Any, allow: str | None = None) -> None:
        self._send(status, json.dumps(doc).encode("utf-8"), "application/json", allow)

    def _authorized(self, parts: list[str]) -> bool:
        """The token, from the Authorization header only (a URL leaks into logs and
        history); the dashboard page and the API description are public."""
        token = self.rest.token
        if token is None or not parts or (len(parts) == 1 and parts[0] in _PUBLIC):
            return True
        if parts[0] == "static" and len(parts) == 2:
            return True
        header = self.headers.get("Authorization", "")
        given = header[7:] if header.startswith("Bearer ") else ""
        return hmac.compare_digest(given.encode(), token.encode())

    def _content_length(self) -> int:
        """The declared body size, checked against the cap before anything is read."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise ApiError(411, "chunked request bodies are not accepted: send Content-Length")
        raw = self.headers.get("Content-Length")
        try:
            length = int(raw) if raw is not None else 0
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise ApiError(400, "invalid Content-Length")
        if length > self.rest.max_body_bytes:
            self.close_connection = True  # the body is never read
            raise ApiError(
                413,
                f"the request body ({length} bytes) exceeds the limit of {self.rest.max_body_bytes} bytes "
                "('rest.max-body-bytes')",
            )
        return length

    def _body(self) -> dict[str, Any]:
        length = self._content_length()
        if not length:
            return {}
        ctype = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        raw = self.rfile.read(length)
        if ctype != "application/json":
            raise ApiError(415, "request bodies must be JSON ('Content-Type: application/json')")
        try:
            doc = json.loads(raw)
        except ValueError:
            raise ApiError(400, "the request body is not valid JSON") from None
        if not isinstance(doc, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return doc

    def _dispatch(self) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        parts = [p for p in url.path.split("/") if p]
        if parts[:1] == ["v1"]:  # Flink accepts a /v1 prefix
            parts = parts[1:]
        try:
            if not self.rest.host_allowed(self.headers.get("Host")):
                raise ApiError(403, "the Host header does not name this server")
            if not self.rest.origin_allowed(self.headers.get("Origin")):
                raise ApiError(403, "cross-origin requests are not accepted")
            if not self._authorized(parts):
                self._json(401, {"errors": ["missing or wrong token: send 'Authorization: Bearer <token>'"]})
                return
            self._content_length()  # every method: an oversized body is refused unread
            self._route(self.command, parts, query)
        except ApiError as e:
            self._json(e.status, {"errors": [_clip(str(e))]}, e.allow)
        except Exception as e:  # noqa: BLE001 - a bug must not kill the connection silently
            self._json(500, {"errors": [f"internal error while serving the request ({type(e).__name__})"]})

    do_GET = do_POST = do_PATCH = do_HEAD = _dispatch  # noqa: N815 - stdlib naming

    def __getattr__(self, name: str) -> Any:
        """Any other method (PUT, TRACE, QUERY, ...) is answered 405 with an Allow header."""
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    # ------------------------------------------------------------------ routes
    def _route(self, method: str, parts: list[str], query: dict[str, list[str]]) -> None:
        rest = self.rest
        read = method in ("GET", "HEAD")
        if not parts or parts == ["index.html"]:
            self._static("index.html") if read else self._method_not_allowed()
            return
        if parts[0] == "static" and len(parts) == 2 and read:
            self._static(parts[1])
            return
        if parts == ["openapi.json"] and read:
            self._static("openapi.json", package_dir=True)
            return
        if parts == ["config"] and read:
            self._json(200, {"flink-version": views.FLINK_VERSION, "refresh-interval": 1000, "features": {}})
            return
        if parts == ["overview"] and read:
            self._json(200, views.overview(rest.handles()))
            return
        if parts == ["metrics"] and read:
            text = views.prometheus(rest.handles(), rest.sampler.monitors)
            self._send(200, text.encode("utf-8"), "text/plain; version=0.0.4; charset=utf-8")
            return
        if parts in (["jobs"], ["jobs", "overview"]):
            if method == "POST" and parts == ["jobs"]:
                self._json(200, rest.submit(self._body()))
            elif read and parts == ["jobs"]:
                self._json(200, {"jobs": [{"id": h.job_id, "status": views.job_state(h)} for h in rest.handles()]})
            elif read:
                self._json(200, {"jobs": [views.job_summary(h) for h in rest.handles()]})
            else:
                self._method_not_allowed()
            return
        if parts[0] != "jobs" or len(parts) < 2:
            self._unrouted(parts)
        job_id = parts[1]
        if method not in ("GET", "HEAD", "POST", "PATCH"):
            self._method_not_allowed()
        h = rest.handle(job_id)
        mon = rest.sampler.monitor(h)
        tail = parts[2:]
        if not tail:
            if read:
                self._json(200, views.job_detail(h, mon))
            elif method == "PATCH":  # Flink: PATCH /jobs/:id?mode=cancel
                if query.get("mode", ["cancel"]) != ["cancel"]:
                    raise ApiError(400, "mode must be 'cancel'")
                h.cancel()
                self._json(202, {})
            else:
                self._method_not_allowed()
            return
        if not read and method not in ("POST", "PATCH"):
            self._method_not_allowed()
        if tail == ["checkpoints"] and read:
            self._json(200, views.checkpoints(mon))
            return
        if tail == ["exceptions"] and read:
            self._json(200, views.exceptions(h))
            return
        if tail == ["stop"] and method in ("POST", "PATCH"):
            self._json(202, rest.stop(job_id, self._body()))
            return
        if tail == ["savepoints"] and method == "POST":
            self._json(202, rest.stop(job_id, self._body(), savepoint_only=True))
            return
        if len(tail) == 2 and tail[0] == "savepoints" and read:
            op = rest.operations.get(tail[1])
            if op is None:
                raise ApiError(404, f"No savepoint operation {tail[1]}")
            self._json(200, op)
            return
        if len(tail) >= 2 and tail[0] == "vertices" and read:
            self._vertex(mon, tail[1], tail[2:], query)
            return
        self._unrouted(parts)

    def _vertex(self, mon: Any, vid: str, tail: list[str], query: dict[str, list[str]]) -> None:
        ex = mon.executor
        node = views.node_by_vertex(ex, vid) if ex is not None else None
        if node is None:
            raise ApiError(404, f"Vertex {vid} not found")
        values = views.vertex_metrics(mon, node.id)
        if tail == ["metrics"]:
            wanted = [m for g in query.get("get", []) for m in g.split(",") if m]
            if not wanted:
                self._json(200, [{"id": k} for k in views.VERTEX_METRICS])
            else:
                self._json(200, [{"id": k, "value": str(values[k])} for k in wanted if k in values])
            return
        if not tail:
            self._json(200, {"id": vid, "name": node.label or node.operator, "parallelism": node.parallelism, **values})
            return
        raise ApiError(404, f"Not found: vertices/{vid}/{'/'.join(tail)}")

    def _unrouted(self, parts: list[str]) -> None:
        """405 for a known path with another method, else 404."""
        known = {("overview",), ("metrics",), ("config",), ("openapi.json",), ("jobs",), ("jobs", "overview")}
        shape = tuple(p if i != 1 or parts[0] != "jobs" else "*" for i, p in enumerate(parts))
        jobs = {("jobs", "*"), ("jobs", "*", "checkpoints"), ("jobs", "*", "stop"), ("jobs", "*", "savepoints")}
        if tuple(parts) in known or shape in jobs or (len(parts) >= 4 and parts[0] == "jobs"):
            self._method_not_allowed()
        raise ApiError(404, f"Not found: /{'/'.join(parts)}")

    def _method_not_allowed(self) -> None:
        parts = [p for p in urlparse(self.path).path.split("/") if p]
        parts = parts[1:] if parts[:1] == ["v1"] else parts
        raise ApiError(405, f"{self.command} is not allowed here", allowed_methods(parts))

    def _static(self, name: str, package_dir: bool = False) -> None:
        base = resources.files("streamsql.rest")
        path = base / name if package_dir else base / "static" / name
        if "/" in name or name.startswith(".") or not path.is_file():
            raise ApiError(404, f"Not found: {name}")
        suffix = "." + name.rsplit(".", 1)[-1]
        self._send(200, path.read_bytes(), _STATIC_TYPES.get(suffix, "application/octet-stream"))


def start_rest_server(
    env: Any,
    port: int,
    host: str | None = None,
    token: str | None = None,
    allow_submit: bool = False,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> RestServer:
    """Start (on a daemon thread) the REST server for `env`'s jobs."""
    return RestServer(env, port, host or "127.0.0.1", token, allow_submit, max_body_bytes).start()


def server_options(cfg: Any) -> dict[str, Any]:
    """The REST settings of a session's configuration (`rest.*`), checked: what both
    servers start from. RestConfigError for an unusable combination."""
    host = BIND_ADDRESS.get(cfg)
    token = resolve_token(TOKEN.get(cfg), TOKEN_FILE.get(cfg))
    check_bind(host, token)
    try:
        max_body = MAX_BODY_BYTES.get(cfg)
    except ConfigError as e:
        raise RestConfigError(str(e)) from None
    return {"host": host, "token": token, "allow_submit": ALLOW_SUBMIT.get(cfg), "max_body_bytes": max_body}


def serve_session(env: Any, handle: Any = None) -> RestServer:
    """The job process's server (`rest.port` set): started with the session's first job,
    watching `handle` from its start so that no checkpoint is missed."""
    server: RestServer | None = getattr(env, "_rest_server", None)
    if server is None:
        cfg = env.get_config()
        server = start_rest_server(env, PORT.get(cfg) or 0, **server_options(cfg))
        env._rest_server = server
        import sys

        sys.stderr.write(f"[INFO] REST API and dashboard: {server.url}\n")
        sys.stderr.flush()
    if handle is not None:
        server.sampler.monitor(handle)
    return server
