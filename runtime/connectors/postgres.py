"""PostgreSQL plumbing shared by the 'jdbc' and 'postgres-cdc' connectors: connections
(psycopg 3, imported on first use so the CLI's start-up does not pay for it), the type
mapping of Flink's JDBC Postgres dialect, the planning-time check of a declared table
against the server's catalog, and the two vectorized conversions every row goes through:

- PostgreSQL *text* values (what `COPY ... TO STDOUT` and pgoutput's text-format tuples
  carry) → Arrow columns of the declared Flink types: the text is read as an Arrow string
  column and cast by Arrow kernels (numbers, DECIMAL, DATE, TIMESTAMP[_LTZ], TIME); only
  BYTES and ARRAY values are parsed one by one (PostgreSQL's hex and `{...}` literals);
- Arrow columns → CSV for `COPY ... FROM STDIN` (Arrow's CSV writer; BYTES and ARRAY are
  rendered as PostgreSQL literals).
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from runtime.errors import ConnectorError
from runtime.frozen import frozen_dataclass
from runtime.types import DataType, Field

# --------------------------------------------------------------------------- connections


@frozen_dataclass
class Endpoint:
    """Where a table lives: libpq connection parameters."""

    host: str
    port: int
    database: str
    user: str | None = None
    password: str | None = None

    def conninfo(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"host": self.host, "port": self.port, "dbname": self.database}
        if self.user:
            kw["user"] = self.user
        if self.password:
            kw["password"] = self.password
        return kw

    def describe(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"


_URL = re.compile(r"^jdbc:postgresql://(?P<host>\[[^\]]+\]|[^:/?]+)(?::(?P<port>\d+))?/(?P<db>[^?]+)(?:\?(?P<q>.*))?$")


def parse_jdbc_url(url: str, user: str | None, password: str | None) -> Endpoint:
    """`jdbc:postgresql://host[:port]/database[?user=..&password=..]` (Flink's 'url')."""
    m = _URL.match(url.strip())
    if not m:
        raise ConnectorError(
            f"Unsupported JDBC url '{url}': streamsql's jdbc connector speaks PostgreSQL, "
            "'jdbc:postgresql://host:port/database'."
        )
    params = dict(p.split("=", 1) for p in (m.group("q") or "").split("&") if "=" in p)
    return Endpoint(
        host=m.group("host").strip("[]"),
        port=int(m.group("port") or 5432),
        database=m.group("db"),
        user=user or params.get("user"),
        password=password or params.get("password"),
    )


def connect(
    endpoint: Endpoint, *, autocommit: bool = True, retry_timeout_s: float = 60.0, connect_timeout_s: int | None = None
) -> Any:
    """A psycopg connection with the session settings the text conversions rely on (UTC,
    ISO dates); retries refused connections for up to `retry_timeout_s`
    ('connection.max-retry-timeout'). Each attempt may take `connect_timeout_s` (default:
    the retry timeout, at least 1 s)."""
    import psycopg

    deadline = time.monotonic() + max(0.0, retry_timeout_s)
    while True:
        try:
            con = psycopg.connect(
                **endpoint.conninfo(),
                autocommit=autocommit,
                options="-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=3",
                connect_timeout=connect_timeout_s or max(1, int(retry_timeout_s) or 1),
            )
            return con
        except psycopg.OperationalError as e:
            if time.monotonic() >= deadline:
                raise ConnectorError(f"Cannot connect to PostgreSQL at {endpoint.describe()}: {e}".strip()) from None
            time.sleep(0.2)


def quote_ident(name: str) -> str:
    """A possibly schema-qualified name as quoted identifiers (`s.t` → `"s"."t"`)."""
    return ".".join('"' + p.replace('"', '""') + '"' for p in name.split("."))


def split_table(name: str) -> tuple[str, str]:
    """(schema, table) of 'table-name' (default schema `public`)."""
    parts = name.split(".")
    return ("public", parts[0]) if len(parts) == 1 else (parts[-2], parts[-1])


# --------------------------------------------------------------------------- types

_INT_TYPES = {"int2": "SMALLINT", "int4": "INT", "int8": "BIGINT"}
_FAMILIES = {
    "TINYINT": "integer",
    "SMALLINT": "integer",
    "INT": "integer",
    "BIGINT": "integer",
    "FLOAT": "float",
    "DOUBLE": "float",
    "DECIMAL": "decimal",
    "BOOLEAN": "boolean",
    "CHAR": "string",
    "VARCHAR": "string",
    "BINARY": "bytes",
    "VARBINARY": "bytes",
    "DATE": "date",
    "TIME": "time",
    "TIMESTAMP": "timestamp",
    "TIMESTAMP_LTZ": "timestamp_ltz",
    "ARRAY": "array",
}
# PostgreSQL type (pg_type.typname) → the family of Flink's JDBC Postgres dialect mapping.
_PG_FAMILIES = {
    "int2": "integer",
    "int4": "integer",
    "int8": "integer",
    "float4": "float",
    "float8": "float",
    "numeric": "decimal",
    "bool": "boolean",
    "text": "string",
    "varchar": "string",
    "bpchar": "string",
    "char": "string",
    "name": "string",
    "json": "string",
    "jsonb": "string",
    "uuid": "string",
    "bytea": "bytes",
    "date": "date",
    "time": "time",
    "timestamp": "timestamp",
    "timestamptz": "timestamp_ltz",
}


def pg_family(typname: str) -> str | None:
    """The Flink type family a PostgreSQL column maps to (arrays: `_int4` → `array`)."""
    if typname.startswith("_"):
        return "array" if typname[1:] in _PG_FAMILIES else None
    return _PG_FAMILIES.get(typname)


def compatible(declared: DataType, typname: str) -> bool:
    """Whether a column declared `declared` can carry the PostgreSQL type `typname`."""
    fam = _FAMILIES.get(declared.name)
    if fam is None or fam != pg_family(typname):
        return False
    if fam == "array":
        return compatible(declared.children[0], typname[1:])
    return True


def pg_type_of(t: DataType) -> str:
    """The PostgreSQL column type Flink's dialect uses for a Flink type (CREATE TABLE by a sink)."""
    n = t.name
    simple = {
        "TINYINT": "smallint",
        "SMALLINT": "smallint",
        "INT": "integer",
        "BIGINT": "bigint",
        "FLOAT": "real",
        "DOUBLE": "double precision",
        "BOOLEAN": "boolean",
        "DATE": "date",
        "BINARY": "bytea",
        "VARBINARY": "bytea",
        "CHAR": "text",
        "VARCHAR": "text",
    }
    if n in simple:
        return simple[n]
    if n == "DECIMAL":
        return f"numeric({t.precision or 10},{t.scale or 0})"
    if n == "TIME":
        return "time"
    if n == "TIMESTAMP":
        return "timestamp"
    if n == "TIMESTAMP_LTZ":
        return "timestamptz"
    if n == "ARRAY":
        return pg_type_of(t.children[0]) + "[]"
    raise ConnectorError(f"type {t} has no PostgreSQL counterpart in Flink's JDBC Postgres dialect")


@frozen_dataclass
class PgColumn:
    name: str
    typname: str
    not_null: bool


def table_columns(con: Any, table: str) -> list[PgColumn] | None:
    """The table's columns in order, or None when it does not exist."""
    schema, name = split_table(table)
    rows = con.execute(
        "SELECT a.attname, t.typname, a.attnotnull FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (schema, name),
    ).fetchall()
    if not rows:
        exists = con.execute(
            "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = %s",
            (schema, name),
        ).fetchall()
        return [] if exists else None
    return [PgColumn(r[0], r[1], bool(r[2])) for r in rows]


def primary_key(con: Any, table: str) -> list[str]:
    """The table's PRIMARY KEY columns ([] without one)."""
    schema, name = split_table(table)
    rows = con.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indisprimary AND n.nspname = %s AND c.relname = %s "
        "ORDER BY array_position(i.indkey, a.attnum)",
        (schema, name),
    ).fetchall()
    return [r[0] for r in rows]


def unique_keys(con: Any, table: str) -> list[set[str]]:
    """Column sets of the table's unique indexes (PRIMARY KEY included)."""
    schema, name = split_table(table)
    rows = con.execute(
        "SELECT array_agg(a.attname::text) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
        "WHERE i.indisunique AND n.nspname = %s AND c.relname = %s GROUP BY i.indexrelid",
        (schema, name),
    ).fetchall()
    return [set(r[0]) for r in rows]


def check_columns(connector: str, table: str, where: str, columns: list[PgColumn], fields: tuple[Field, ...]) -> None:
    """Every declared column exists in the PostgreSQL table with a type it can carry."""
    by_name = {c.name: c for c in columns}
    for f in fields:
        col = by_name.get(f.name)
        if col is None:
            raise ConnectorError(
                f"Column '{f.name}' of table '{table}' ('{connector}') does not exist in the PostgreSQL table "
                f"{where}: it has {', '.join(c.name for c in columns)}."
            )
        if not compatible(f.type, col.typname):
            raise ConnectorError(
                f"Column '{f.name}' of table '{table}' ('{connector}') is declared {f.type} but is "
                f"{col.typname} in the PostgreSQL table {where}; Flink's Postgres dialect maps {col.typname} to "
                f"{_FLINK_OF.get(pg_family(col.typname) or '', 'no Flink type')}."
            )


_FLINK_OF = {
    "integer": "SMALLINT/INT/BIGINT",
    "float": "FLOAT/DOUBLE",
    "decimal": "DECIMAL",
    "boolean": "BOOLEAN",
    "string": "STRING",
    "bytes": "BYTES",
    "date": "DATE",
    "time": "TIME",
    "timestamp": "TIMESTAMP",
    "timestamp_ltz": "TIMESTAMP_LTZ",
    "array": "ARRAY",
}


# --------------------------------------------------------------------------- text -> Arrow


def from_text(values: pa.Array, t: DataType) -> pa.Array:
    """A string column of PostgreSQL text values (NULLs as nulls) as Arrow type of `t`."""
    target = t.to_arrow()
    n = t.name
    if len(values) == 0:
        return pa.array([], type=target)
    if values.type != pa.string():
        values = values.cast(pa.string())
    if n in ("CHAR", "VARCHAR"):
        return values
    if n == "BOOLEAN":
        return pc.starts_with(values, "t")  # COPY writes t/f, a ::text cast true/false
    if n in ("TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL", "DATE"):
        if n == "DECIMAL":  # PostgreSQL rounds to the declared scale on insert; the text may have more digits
            return pc.round(values.cast(pa.decimal128(38, max(t.scale or 0, 18))), ndigits=t.scale or 0).cast(target)
        return values.cast(target)
    if n == "TIMESTAMP":
        return values.cast(pa.timestamp("us")).cast(target, safe=False)
    if n == "TIMESTAMP_LTZ":
        return values.cast(pa.timestamp("us", tz="UTC")).cast(target, safe=False)
    if n == "TIME":
        hh = pc.utf8_slice_codeunits(values, 0, 2).cast(pa.int64())
        mm = pc.utf8_slice_codeunits(values, 3, 5).cast(pa.int64())
        ss = pc.utf8_slice_codeunits(values, 6, 8).cast(pa.int64())
        frac = pc.utf8_rpad(pc.utf8_slice_codeunits(values, 9, 15), 6, "0")
        frac = pc.if_else(pc.equal(frac, "000000"), "0", frac).cast(pa.int64())
        micros = pc.add(pc.multiply(pc.add(pc.multiply(pc.add(pc.multiply(hh, 60), mm), 60), ss), 1_000_000), frac)
        return micros.cast(pa.time64("us")).cast(target, safe=False)
    if n in ("BINARY", "VARBINARY"):
        return pa.array([None if v is None else bytes.fromhex(v[2:]) for v in values.to_pylist()], type=target)
    if n == "ARRAY":
        parsed = [None if v is None else parse_array_literal(v) for v in values.to_pylist()]
        lists = pa.array(parsed, type=pa.list_(pa.string()))
        child = from_text(lists.flatten(), t.children[0])
        offsets = lists.offsets
        return pa.ListArray.from_arrays(offsets, child, type=target, mask=lists.is_null())
    raise ConnectorError(f"type {t} is not read from PostgreSQL")


def parse_array_literal(text: str) -> list[str | None]:
    """A one-dimensional PostgreSQL array literal `{a,"b c",NULL}` as its element texts."""
    out: list[str | None] = []
    body = text[text.index("{") + 1 : text.rindex("}")]
    i, n = 0, len(body)
    while i < n:
        if body[i] == '"':
            j, buf = i + 1, []
            while body[j] != '"':
                if body[j] == "\\":
                    j += 1
                buf.append(body[j])
                j += 1
            out.append("".join(buf))
            i = j + 2
        else:
            j = body.find(",", i)
            j = n if j < 0 else j
            item = body[i:j]
            out.append(None if item == "NULL" else item)
            i = j + 1
    return out


def csv_to_batches(
    data: bytes | io.BufferedIOBase, fields: tuple[Field, ...], block_rows: int
) -> Iterator[pa.RecordBatch]:
    """Batches of `COPY ... TO STDOUT (FORMAT csv)` output in the declared types. Every
    column is read as text (an unquoted empty field is NULL, a quoted one the empty
    string) and converted by `from_text`."""
    import pyarrow.csv as pacsv

    if isinstance(data, bytes) and not data:  # no rows (e.g. a lookup whose keys all miss): Arrow refuses empty CSV
        return
    names = [f"c{i}" for i in range(len(fields))]
    src = pa.BufferReader(data) if isinstance(data, bytes) else data
    reader = pacsv.open_csv(
        src,
        read_options=pacsv.ReadOptions(column_names=names, block_size=max(1 << 16, block_rows * 64), use_threads=False),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: pa.string() for n in names},
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            null_values=[""],
        ),
    )
    schema = pa.schema([pa.field(f.name, f.type.to_arrow()) for f in fields])
    for raw in reader:
        if raw.num_rows:
            cols = [from_text(raw.column(i), f.type) for i, f in enumerate(fields)]
            yield pa.RecordBatch.from_arrays(cols, schema=schema)


def select_text(fields: tuple[Field, ...], alias: str = "") -> str:
    """The select list for COPY: json/jsonb and other string-mapped types come out as text."""
    pre = f"{alias}." if alias else ""
    return ", ".join(f"{pre}{quote_ident(f.name)}" for f in fields)


# --------------------------------------------------------------------------- Arrow -> CSV


def _pg_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return '"\\\\x' + v.hex() + '"'
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, list):
        return "{" + ",".join(_pg_literal(x) for x in v) + "}"
    s = str(v)
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_csv(table: pa.Table) -> bytes:
    """`table` as CSV for `COPY ... FROM STDIN (FORMAT csv)`: NULL is an unquoted empty field."""
    import pyarrow.csv as pacsv

    cols = []
    for col in table.columns:
        typ = col.type
        if pa.types.is_binary(typ) or pa.types.is_large_binary(typ) or pa.types.is_fixed_size_binary(typ):
            col = pa.array([None if v is None else "\\x" + v.hex() for v in col.to_pylist()], pa.string())
        elif pa.types.is_list(typ) or pa.types.is_large_list(typ):
            col = pa.array([None if v is None else _pg_literal(v) for v in col.to_pylist()], pa.string())
        elif pa.types.is_timestamp(typ) and typ.tz is not None:
            col = col.cast(pa.timestamp(typ.unit))  # UTC wall time; the session's TimeZone is UTC
        cols.append(col)
    out = pa.BufferOutputStream()
    pacsv.write_csv(
        pa.Table.from_arrays(cols, names=[f"c{i}" for i in range(len(cols))]),
        out,
        pacsv.WriteOptions(include_header=False),
    )
    return out.getvalue().to_pybytes()
