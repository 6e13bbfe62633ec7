"""REST API, Prometheus metrics and the web dashboard of streamsql jobs (docs/rest.md)."""

from streamsql.rest.server import RestConfigError, RestServer, start_rest_server

__all__ = ["RestConfigError", "RestServer", "start_rest_server"]
