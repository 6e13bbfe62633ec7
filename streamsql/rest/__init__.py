"""REST API, Prometheus metrics and the web dashboard of streamsql jobs (docs/rest.md).

The server lives in `streamsql.rest.server`; this package module imports nothing, so that
reading the REST options (`streamsql.rest.options`, which every session's configuration
registry loads) does not load the HTTP server (~30 ms of start-up) unless a server starts.
"""
