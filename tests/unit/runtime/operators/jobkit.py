"""Test kit: a tiny file connector, a collecting sink, JobGraph builders and a renderer
that prints values as the conformance files do. Loaded by tests/unit/runtime/conftest.py
(fixture `kit`)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.json as pajson
from harness import final_table as fold_changelog

from runtime.connectors.base import ConfigOption, ConnectorFactory, Sink, Source, SplitReader, register_connector
from runtime.executor.local import LocalExecutor
from runtime.expr.ir import Call, InputRef, Literal
from runtime.graph import BATCH, STREAMING, JobGraph, Node
from runtime.operators.spec import encode_value, spec_for
from runtime.types import BIGINT, INT, INTERVAL_DAY_TIME, STRING, TIMESTAMP, TIMESTAMP_LTZ, DataType, Field

CASES = Path(__file__).resolve().parents[4] / "tests" / "conformance" / "cases"


# ---------------------------------------------------------------------- fake connector
class _Reader(SplitReader):
    def __init__(self, table: pa.Table, rows: int) -> None:
        self.batches = table.to_batches(max_chunksize=rows) if table.num_rows else []
        self.pos = 0

    def read(self, max_rows: int) -> pa.RecordBatch | None:
        if self.pos >= len(self.batches):
            return None
        self.pos += 1
        return self.batches[self.pos - 1]


class _Source(Source):
    def __init__(self, options: dict[str, str], schema: tuple[Field, ...], projection: list[int] | None) -> None:
        self.options = options
        self.schema = schema
        self.projection = projection
        self.produced_schema = tuple(schema[i] for i in projection) if projection is not None else schema

    def splits(self) -> list[str]:
        return [self.options["path"]]

    def create_reader(self, split_id: str) -> SplitReader:
        arrow_schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in self.schema])
        if split_id.endswith(".json"):
            table = pajson.read_json(split_id, parse_options=pajson.ParseOptions(explicit_schema=arrow_schema))
        else:
            types = {f.name: (pa.string() if pa.types.is_timestamp(f.type) else f.type) for f in arrow_schema}
            table = pacsv.read_csv(
                split_id,
                read_options=pacsv.ReadOptions(column_names=[f.name for f in self.schema]),
                convert_options=pacsv.ConvertOptions(
                    column_types=types, null_values=["NULL"], strings_can_be_null=True
                ),
            )
            cols = []
            for f in arrow_schema:
                c = table.column(f.name)
                if pa.types.is_timestamp(f.type):
                    c = pa.array(
                        [None if v is None else dt.datetime.fromisoformat(v) for v in c.to_pylist()],
                        type=pa.timestamp("ms"),
                    ).cast(f.type)
                cols.append(c)
            table = pa.table(cols, schema=arrow_schema)
        if self.projection is not None:
            table = table.select(self.projection)
        return _Reader(table, int(self.options.get("rows-per-batch", "1000")))


COLLECTED: dict[str, list[pa.RecordBatch]] = {}


class _Sink(Sink):
    def __init__(self, name: str) -> None:
        self.name = name
        self.closed = False

    def write(self, batch: pa.RecordBatch) -> None:
        COLLECTED.setdefault(self.name, []).append(batch)

    def close(self) -> None:
        self.closed = True
        COLLECTED.setdefault(self.name + ".closed", [])


register_connector(
    ConnectorFactory(
        name="testfile",
        description="test-only CSV/JSON reader",
        options=(ConfigOption("path", required=True), ConfigOption("rows-per-batch", "int")),
        create_source=lambda options, schema, projection, ctx: _Source(options, schema, projection),
        create_sink=lambda options, schema, ctx: _Sink(options.get("name", "sink")),
    )
)


# ---------------------------------------------------------------------- builders
def ts3(nullable: bool = True) -> DataType:
    return TIMESTAMP(3, nullable)


def ref(i: int, t: DataType) -> InputRef:
    return InputRef(i, t)


def minus_interval(i: int, t: DataType, ms: int) -> Call:
    return Call("minus", (InputRef(i, t), Literal(ms, INTERVAL_DAY_TIME(False))), t)


def scan(nid: int, path: Path | str, fields: list[Field], rows_per_batch: int = 1000) -> Node:
    return Node(
        nid,
        "TableSourceScan",
        (),
        tuple(fields),
        typed_params(
            "TableSourceScan",
            {
                "table": "t",
                "connector": "testfile",
                "options": {"path": str(path), "rows-per-batch": str(rows_per_batch)},
                "physical_schema": list(fields),
                "projection": None,
                "bounded": True,
            },
        ),
    )


def typed_params(op: str, params: dict[str, Any]) -> Any:
    """`params` (the JSON-shaped dict a test writes) as operator `op`'s typed params."""
    spec = spec_for(op)
    return params if spec is None else spec.decode_params(encode_value(params))


def node(nid: int, op: str, inputs: tuple[int, ...], fields: list[Field], mode: str = "I", **params: Any) -> Node:
    return Node(nid, op, inputs, tuple(fields), typed_params(op, params), changelog_mode=mode)


def agg(
    name: str, args: list[int], rtype: DataType, distinct: bool = False, filt: int | None = None, **params: Any
) -> dict[str, Any]:
    return {"name": name, "args": args, "distinct": distinct, "filter": filt, "type": rtype, "params": params}


def window(kind: str, **kw: Any) -> dict[str, Any]:
    spec = {k: None for k in ("size_ms", "slide_ms", "step_ms", "offset_ms", "gap_ms")}
    spec["partition_keys"] = []
    spec["kind"] = kind
    spec.update(kw)
    return spec


EVENTS = [Field("ts", ts3()), Field("k", STRING()), Field("v", INT())]
KV = [Field("k", STRING()), Field("v", INT()), Field("s", STRING()), Field("d", DataType("DOUBLE"))]


def events_with_watermark(case: str, delay_ms: int, rows_per_batch: int = 1000) -> list[Node]:
    """scan(ts, k, v) -> WatermarkAssigner(ts - delay) over a case's events.csv."""
    return [
        scan(1, CASES / case / "events.csv", EVENTS, rows_per_batch),
        node(
            2,
            "WatermarkAssigner",
            (1,),
            EVENTS,
            rowtime_index=0,
            watermark=minus_interval(0, ts3(), delay_ms),
            idle_timeout_ms=None,
        ),
    ]


def run(
    nodes: list[Node], result: int | None, mode: str = STREAMING, config: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], LocalExecutor]:
    # The conformance cases these graphs replay emit a watermark after every record.
    conf = {"pipeline.auto-watermark-interval": "0", **(config or {})}
    g = JobGraph(tuple(nodes), mode=mode, config=conf, result_node=result)
    ex = LocalExecutor(g)
    rows: list[dict[str, Any]] = []
    out_node = g.node(result) if result is not None else None
    for b in ex.run():
        for r in b.to_pylist():
            op = ("+I", "-U", "+U", "-D")[r.pop("__op")]
            types = [f.type for f in out_node.schema] if out_node else []
            rows.append({"op": op, "row": [render(v, t) for v, t in zip(r.values(), types, strict=True)]})
    return rows, ex


# ---------------------------------------------------------------------- rendering
def render(v: Any, t: DataType, tz: str = "UTC") -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            import zoneinfo

            v = v.astimezone(zoneinfo.ZoneInfo(tz)).replace(tzinfo=None)
        return v.strftime("%Y-%m-%d %H:%M:%S.") + f"{v.microsecond // 1000:03d}"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    return str(v)


def expected(case: str, name: str) -> list[dict[str, Any]]:
    path = CASES / case / "expected" / name
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def final_table(changelog: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Apply a changelog (the conformance harness's strict fold); the rows, sorted."""
    return sorted(fold_changelog(changelog).elements(), key=lambda r: [(x is not None, x) for x in r])


def as_rows(changelog: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(c["row"]) for c in changelog), key=lambda r: [(x is not None, x) for x in r])


__all__ = [
    "BATCH",
    "BIGINT",
    "CASES",
    "EVENTS",
    "INT",
    "KV",
    "STREAMING",
    "STRING",
    "TIMESTAMP_LTZ",
    "agg",
    "as_rows",
    "events_with_watermark",
    "expected",
    "final_table",
    "node",
    "ref",
    "render",
    "run",
    "scan",
    "ts3",
    "window",
]


def shift_render(utc_text: str, tz: str) -> str:
    """Re-render a UTC-rendered TIMESTAMP_LTZ value in zone `tz`."""

    v = dt.datetime.strptime(utc_text, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=dt.UTC)
    return render(v, TIMESTAMP_LTZ(3), tz)
