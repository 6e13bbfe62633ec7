"""`streamsql serve`: a standing session server. Jobs are submitted as SQL scripts with
POST /jobs (DDL runs in the session; each INSERT becomes a job) and watched through the
REST API and the dashboard, until Ctrl-C."""

from __future__ import annotations

import argparse
from typing import TextIO

from runtime.config.core import RUNTIME_MODE
from runtime.errors import ConfigError
from streamsql.rest import options as rest
from streamsql.rest.server import RestConfigError, RestServer, server_options


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="streamsql serve", description=__doc__)
    p.add_argument("--port", type=int, default=8081, help="port (default 8081; 0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    p.add_argument(
        "--token",
        help="bearer token clients must send (required when --host is not loopback; visible in `ps`: "
        "prefer --token-file or $STREAMSQL_REST_TOKEN)",
    )
    p.add_argument("--token-file", help="read the bearer token from this file (rest.token-file)")
    p.add_argument(
        "--allow-submit",
        action="store_true",
        help="enable POST /jobs and savepoint target directories without a token (rest.allow-submit)",
    )
    p.add_argument("--max-body-bytes", type=int, help="largest request body accepted (rest.max-body-bytes)")
    p.add_argument("--mode", choices=["streaming", "batch"], help="runtime mode of the session")
    p.add_argument("-i", "--init", help="a .sql file to run first in the session (e.g. CREATE TABLEs)")
    p.add_argument(
        "-D", "--set", dest="options", action="append", default=[], metavar="KEY=VALUE", help="a configuration option"
    )
    return p


def serve_main(argv: list[str], err: TextIO) -> int:
    from streamsql.environment import EnvironmentSettings, TableEnvironment

    args = build_parser().parse_args(argv)
    conf = dict(o.partition("=")[::2] for o in args.options)
    conf = {k.strip(): v.strip() for k, v in conf.items()}
    if args.mode:
        conf[RUNTIME_MODE.key] = args.mode
    for option, value in (
        (rest.BIND_ADDRESS, args.host),
        (rest.TOKEN, args.token),
        (rest.TOKEN_FILE, args.token_file),
        (rest.MAX_BODY_BYTES, args.max_body_bytes),
    ):
        if value is not None:
            conf[option.key] = str(value)
    if args.allow_submit:
        conf[rest.ALLOW_SUBMIT.key] = "true"
    try:
        options = server_options(conf)  # refused before the init script runs
    except RestConfigError as e:
        err.write(f"[ERROR] Could not start the REST server: {e}\n")
        return 1
    try:
        env = TableEnvironment.create(EnvironmentSettings.new_instance().with_configuration(conf).build())
    except ConfigError as e:  # a bad -D value
        err.write(f"[ERROR] {e}\n")
        return 1
    if args.init:
        with open(args.init, encoding="utf-8") as fh:
            env.execute_sql(fh.read())
    try:
        server = RestServer(env, args.port, **options)
    except (RestConfigError, OSError) as e:
        err.write(f"[ERROR] Could not start the REST server: {e}\n")
        return 1
    err.write(f"[INFO] streamsql session server: REST API and dashboard at {server.url}\n")
    err.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        for handle in env.jobs.values():
            handle.cancel()
    return 0
