"""The print and blackhole sinks."""

from __future__ import annotations

import datetime as dt
import io

import pyarrow as pa

from runtime.batch import with_system_columns
from runtime.connectors.base import SourceContext, get_connector
from runtime.types import INT, STRING, TIMESTAMP, Field, arrow_schema

SCHEMA = (Field("id", INT()), Field("name", STRING()), Field("ts", TIMESTAMP(3)))


def _batch():
    return pa.RecordBatch.from_pylist(
        [{"id": 1, "name": "apple", "ts": dt.datetime(2024, 1, 1)}, {"id": None, "name": "b", "ts": None}],
        schema=arrow_schema(SCHEMA),
    )


def _sink(options):
    sink = get_connector("print").create_sink(options, SCHEMA, SourceContext("STREAMING"))
    buf = io.StringIO()
    sink._stream = buf
    sink.open()
    return sink, buf


def test_print_rows_with_row_kind():
    sink, buf = _sink({})
    sink.write(_batch())
    sink.write(with_system_columns(_batch(), kinds=[1, 3]))
    sink.close()
    assert buf.getvalue().splitlines() == [
        "+I[1, apple, 2024-01-01 00:00:00.000]",
        "+I[NULL, b, NULL]",
        "-U[1, apple, 2024-01-01 00:00:00.000]",
        "-D[NULL, b, NULL]",
    ]


def test_print_identifier_and_stderr(capsys):
    sink, buf = _sink({"print-identifier": "job"})
    sink.write(_batch().slice(0, 1))
    assert buf.getvalue() == "job> +I[1, apple, 2024-01-01 00:00:00.000]\n"
    err_sink = get_connector("print").create_sink({"standard-error": "true"}, SCHEMA, SourceContext("STREAMING"))
    err_sink.write(_batch().slice(0, 1))
    captured = capsys.readouterr()
    assert captured.err == "+I[1, apple, 2024-01-01 00:00:00.000]\n" and captured.out == ""


def test_blackhole_counts():
    sink = get_connector("blackhole").create_sink({}, SCHEMA, SourceContext("STREAMING"))
    sink.open()
    sink.write(_batch())
    sink.write(_batch())
    sink.close()
    assert sink.rows_written == 4


def test_factories_declare_described_options():
    from runtime.connectors.base import connector_names

    assert {"filesystem", "datagen", "print", "blackhole"} <= set(connector_names())
    for name in ("filesystem", "datagen", "print"):
        factory = get_connector(name)
        assert factory.description
        assert all(opt.description for opt in factory.options), name
    keys = {o.key for o in get_connector("filesystem").options}
    assert {"path", "format", "source.monitor-interval", "csv.null-literal", "json.ignore-parse-errors"} <= keys
