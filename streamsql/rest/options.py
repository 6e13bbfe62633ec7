"""Options of the REST API and web dashboard (docs/rest.md)."""

from __future__ import annotations

from runtime.config.options import key

PORT = (
    key("rest.port")
    .int_type()
    .no_default_value()
    .with_check(lambda v: 0 <= v <= 65535, "a port number between 0 and 65535 (0: any free port)")
    .with_description(
        "Serve the REST API, /metrics and the web dashboard of this session's jobs on this port "
        "(docs/rest.md); unset: no server. `streamsql --rest-port` sets it."
    )
)

BIND_ADDRESS = (
    key("rest.bind-address")
    .string_type()
    .default_value("127.0.0.1")
    .with_description("Address the REST server binds to; not loopback: needs rest.token.")
)

TOKEN = (
    key("rest.token")
    .string_type()
    .no_default_value()
    .with_description(
        "Bearer token the REST server requires (`Authorization: Bearer <token>` only); prefer "
        "rest.token-file or $STREAMSQL_REST_TOKEN over the command line."
    )
)

TOKEN_FILE = (
    key("rest.token-file")
    .string_type()
    .no_default_value()
    .with_description("File whose first line is the REST server's bearer token.")
)

ALLOW_SUBMIT = (
    key("rest.allow-submit")
    .boolean_type()
    .default_value(False)
    .with_description("Enable POST /jobs (runs SQL) and savepoint target directories on a REST server without a token.")
)

MAX_BODY_BYTES = (
    key("rest.max-body-bytes")
    .memory_type()
    .default_value(1 << 20)
    .with_description("Largest REST request body accepted (413 beyond); a bare number is bytes.")
)
