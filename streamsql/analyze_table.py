"""ANALYZE TABLE t [PARTITION (k [= v], ...)] COMPUTE STATISTICS [FOR COLUMNS c, ... | FOR ALL COLUMNS]

Flink's statement, with its validation and messages (batch mode only; a catalog table,
not a view or a temporary table; a partitioned table needs every partition key named).
It reads the table once with a batch query and folds every Arrow batch into per-column
accumulators with Arrow compute kernels (no per-row Python): the row count, and per
column what Flink's ANALYZE TABLE stores for its type (`streamsql.catalog_statistics`):

| type | statistics |
|---|---|
| BOOLEAN | true count, false count, null count |
| TINYINT .. BIGINT, TIMESTAMP (epoch s), TIMESTAMP_LTZ (epoch ms), TIME (ns of day) | min, max, ndv, null count |
| FLOAT, DOUBLE, DECIMAL | min, max (as doubles), ndv, null count |
| DATE | min, max (days since epoch), ndv, null count |
| CHAR, VARCHAR | max length, average length (characters, non-null values), ndv, null count |
| BINARY, VARBINARY | null count |
| others (ARRAY, MAP, ROW, ...) | none |

The number of distinct values is exact (Flink estimates it with APPROX_COUNT_DISTINCT,
a HyperLogLog++ sketch, which is exact on small columns). The results go into the
table's catalog (in memory, or the persistent catalog's file), table statistics replacing
the old ones and column statistics merged over them, as Flink does; a partitioned table
gets statistics per partition (the partitions its connector lists, as SHOW PARTITIONS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from planner.catalog import serializable_type
from planner.catalog_objects import CatalogTable, CatalogView, quoted
from planner.catalog_store import CatalogError, CatalogStore
from planner.errors import SqlError
from planner.statements_catalog import AnalyzeTable
from runtime.batch import data_columns
from runtime.connectors.base import get_connector
from runtime.connectors.filesystem_partitions import (
    DEFAULT_PARTITION_NAME,
    escape_path_name,
    partition_dirs,
    split_by_partition,
)
from runtime.types import BINARY_TYPES, CHARACTER_TYPES, INTEGER_TYPES, DataType, Field
from streamsql.catalog_statistics import (
    CatalogColumnStatistics,
    CatalogColumnStatisticsDataBase,
    CatalogColumnStatisticsDataBinary,
    CatalogColumnStatisticsDataBoolean,
    CatalogColumnStatisticsDataDate,
    CatalogColumnStatisticsDataDouble,
    CatalogColumnStatisticsDataLong,
    CatalogColumnStatisticsDataString,
    CatalogTableStatistics,
    Date,
    column_statistics_from_json,
    column_statistics_json,
    table_statistics_json,
)
from streamsql.result import TableResult

if TYPE_CHECKING:
    from streamsql.environment import TableEnvironment

VALIDATION = "org.apache.flink.table.api.ValidationException"
TABLE_EXCEPTION = "org.apache.flink.table.api.TableException"
# How many distinct values a column keeps unmerged before they are de-duplicated again.
_DISTINCT_MERGE_AT = 1 << 20
_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _err(stmt: AnalyzeTable, message: str, flink_class: str = VALIDATION, at: tuple[int, int] = (1, 1)) -> CatalogError:
    return CatalogError(message, flink_class, sql=stmt.sql, line=at[0], column=at[1])


def partition_path(spec: dict[str, str], keys: tuple[str, ...]) -> str:
    """A partition's `k=v/k2=v2` path (escaped as the filesystem connector names its
    directories): the key its statistics are stored under."""
    return "/".join(f"{escape_path_name(k)}={escape_path_name(str(spec[k]))}" for k in keys)


# ---------------------------------------------------------------------- accumulators
def _family(t: DataType) -> str | None:
    """Which statistics a column of this type gets (None: none, as in Flink)."""
    n = t.name
    if n == "BOOLEAN":
        return "boolean"
    if n in INTEGER_TYPES or n in ("TIMESTAMP", "TIMESTAMP_LTZ", "TIME"):
        return "long"
    if n in ("FLOAT", "DOUBLE", "DECIMAL"):
        return "double"
    if n == "DATE":
        return "date"
    if n in CHARACTER_TYPES:
        return "string"
    if n in BINARY_TYPES:
        return "binary"
    return None


class ColumnAccumulator:
    """One column's statistics over the batches it is fed (`add`), Flink's kind at the end
    (`result`). Work per batch is a few Arrow kernels; distinct values are kept as
    de-duplicated Arrow arrays."""

    def __init__(self, dtype: DataType) -> None:
        self.dtype = dtype
        self.family = _family(dtype)
        self.nulls = 0
        self.true_count = 0
        self.false_count = 0
        self.low: Any = None
        self.high: Any = None
        self.length_sum = 0
        self.length_max: int | None = None
        self.valid = 0
        self._distinct: list[pa.Array] = []
        self._distinct_size = 0

    def _numbers(self, arr: pa.Array) -> pa.Array:
        """The values min / max / ndv are taken over: time types as int64 in their unit."""
        if self.dtype.name in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            return arr.cast(pa.int64())
        if self.dtype.name in ("TIME", "DATE"):
            return arr.cast(pa.int32()).cast(pa.int64())
        return arr

    def add(self, arr: pa.Array) -> None:
        nulls = arr.null_count
        self.nulls += nulls
        valid = len(arr) - nulls
        self.valid += valid
        family = self.family
        if family is None or family == "binary" or valid == 0:
            return
        if family == "boolean":
            trues = int(pc.sum(arr).as_py() or 0)
            self.true_count += trues
            self.false_count += valid - trues
            return
        if family == "string":
            lengths = pc.utf8_length(arr)
            self.length_sum += int(pc.sum(lengths).as_py() or 0)
            longest = int(pc.max(lengths).as_py())
            self.length_max = longest if self.length_max is None else max(self.length_max, longest)
            values = arr
        else:
            values = self._numbers(arr)
            bounds = pc.min_max(values)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
            self.low = low if self.low is None or (low is not None and low < self.low) else self.low
            self.high = high if self.high is None or (high is not None and high > self.high) else self.high
        distinct = pc.unique(values.drop_null())
        self._distinct.append(distinct)
        self._distinct_size += len(distinct)
        if self._distinct_size > _DISTINCT_MERGE_AT and len(self._distinct) > 1:
            merged = pc.unique(pa.concat_arrays(self._distinct))
            self._distinct, self._distinct_size = [merged], len(merged)

    def ndv(self) -> int:
        if not self._distinct:
            return 0
        if len(self._distinct) == 1:
            return len(self._distinct[0])
        return len(pc.unique(pa.concat_arrays(self._distinct)))

    def _long(self, v: int | None) -> int | None:
        """A bound as Flink stores it: TIMESTAMP in epoch seconds, TIMESTAMP_LTZ in epoch
        milliseconds (both floored, as Java's toEpochSecond / toEpochMilli), TIME in
        nanoseconds of the day."""
        if v is None:
            return None
        n = self.dtype.name
        if n in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            per_second = _UNITS_PER_SECOND[self._unit()]
            return v // per_second if n == "TIMESTAMP" else (v * 1000) // per_second
        if n == "TIME":
            return v * 1_000_000  # TIME is carried in milliseconds
        return int(v)

    def _unit(self) -> str:
        return str(self.dtype.to_arrow().unit)

    def result(self) -> CatalogColumnStatisticsDataBase | None:
        family = self.family
        if family == "boolean":
            return CatalogColumnStatisticsDataBoolean(self.true_count, self.false_count, self.nulls)
        if family == "long":
            return CatalogColumnStatisticsDataLong(self._long(self.low), self._long(self.high), self.ndv(), self.nulls)
        if family == "double":
            low = None if self.low is None else float(self.low)
            high = None if self.high is None else float(self.high)
            return CatalogColumnStatisticsDataDouble(low, high, self.ndv(), self.nulls)
        if family == "date":
            return CatalogColumnStatisticsDataDate(
                None if self.low is None else Date(int(self.low)),
                None if self.high is None else Date(int(self.high)),
                self.ndv(),
                self.nulls,
            )
        if family == "string":
            avg = self.length_sum / self.valid if self.valid else None
            return CatalogColumnStatisticsDataString(self.length_max, avg, self.ndv(), self.nulls)
        if family == "binary":
            return CatalogColumnStatisticsDataBinary(None, None, self.nulls)
        return None


class StatisticsAccumulator:
    """The row count and the column accumulators of one table or partition."""

    def __init__(self, columns: list[Field]) -> None:
        self.rows = 0
        self.columns = {f.name: ColumnAccumulator(f.type) for f in columns}

    def add(self, batch: pa.RecordBatch) -> None:
        self.rows += batch.num_rows
        for name, acc in self.columns.items():
            acc.add(batch.column(name))

    def table_statistics(self) -> CatalogTableStatistics:
        return CatalogTableStatistics(self.rows, -1, -1, -1)

    def column_statistics(self) -> CatalogColumnStatistics | None:
        if not self.columns:
            return None
        data = {name: acc.result() for name, acc in self.columns.items()}
        return CatalogColumnStatistics({k: v for k, v in data.items() if v is not None})


# ---------------------------------------------------------------------- the statement
def _target_columns(stmt: AnalyzeTable, table: CatalogTable) -> list[Field]:
    """FOR ALL COLUMNS: the physical columns; FOR COLUMNS: the named ones, which must be
    physical (Flink's messages)."""
    if stmt.all_columns:
        return [Field(c.name, c.type) for c in table.columns if c.kind == "physical"]
    by_name = {c.name: c for c in table.columns}
    out = []
    for i, name in enumerate(stmt.columns):
        at = stmt.column_positions[i] if i < len(stmt.column_positions) else (1, 1)
        col = by_name.get(name)
        if col is None:
            raise _err(stmt, f"Column: {name} does not exist in the table: {quoted(table.path)}.", at=at)
        if col.kind == "computed":
            raise _err(
                stmt, f"Column: {name} is a computed column, ANALYZE TABLE does not support computed column.", at=at
            )
        if col.kind == "metadata":
            raise _err(
                stmt, f"Column: {name} is a metadata column, ANALYZE TABLE does not support metadata column.", at=at
            )
        out.append(Field(col.name, col.type))
    return out


def _target_partitions(stmt: AnalyzeTable, table: CatalogTable) -> list[dict[str, str]] | None:
    """The partitions to analyze (None: the table is not partitioned)."""
    spec = dict(stmt.partition)
    if not table.partitioned_by:
        if spec:
            raise _err(
                stmt,
                f"Invalid ANALYZE TABLE statement. Table: {quoted(table.path)} is not a partition table, "
                "while partition values are given.",
            )
        return None
    if set(spec) != set(table.partitioned_by):
        raise _err(
            stmt,
            "Invalid ANALYZE TABLE statement. For partition table, all partition keys should be specified "
            f"explicitly. The given partition keys: [{','.join(spec)}] are not match the target partition keys: "
            f"[{','.join(table.partitioned_by)}].",
        )
    lister = get_connector(table.connector).list_partitions
    if lister is None:
        raise _err(
            stmt,
            f"ANALYZE TABLE of a partitioned table needs its partitions, and connector '{table.connector}' lists "
            "none: only the filesystem connector keeps partitions streamsql can list.",
            TABLE_EXCEPTION,
        )
    return [
        p
        for p in lister(dict(table.options), table.partitioned_by)
        if all(v is None or p.get(k) == v for k, v in spec.items())
    ]


def _scan_sql(table: CatalogTable, columns: list[Field], stmt: AnalyzeTable) -> str:
    names = [f.name for f in columns] or [next(c.name for c in table.columns if c.kind == "physical")]
    sql = f"SELECT {', '.join(quoted((n,)) for n in names)} FROM {quoted(table.path)}"
    types = {c.name: c.type for c in table.columns}
    fixed = [
        f"{quoted((k,))} = CAST('{v.replace(chr(39), chr(39) * 2)}' AS {serializable_type(types[k].with_nullable(True))})"
        for k, v in stmt.partition
        if v is not None
    ]
    return sql + (" WHERE " + " AND ".join(fixed) if fixed else "")


def _scan(env: TableEnvironment, sql: str) -> Any:
    """The batches of the statistics query (data columns only)."""
    for batch in env.execute_sql(sql).batches():
        yield data_columns(batch)


def analyze_table(env: TableEnvironment, stmt: AnalyzeTable) -> TableResult:
    cat = env.catalog
    path = cat.qualify(stmt.name, stmt.sql)
    store = cat.catalogs.get(path[0])
    obj = None
    if path not in cat.temporary_objects() and store is not None and store.get_database(path[1]) is not None:
        obj = store.get(path[1], path[2])
    if obj is None or store is None:
        raise _err(stmt, f"Table {quoted(path)} doesn't exist or is a temporary table.")
    if isinstance(obj, CatalogView):
        raise _err(stmt, "ANALYZE TABLE for a view is not allowed.")
    assert isinstance(obj, CatalogTable)
    partitions = _target_partitions(stmt, obj)
    columns = _target_columns(stmt, obj)
    if env.is_streaming:
        raise _err(stmt, "ANALYZE TABLE is not supported for streaming mode now", TABLE_EXCEPTION)
    try:
        if partitions is None:
            acc = StatisticsAccumulator(columns)
            for batch in _scan(env, _scan_sql(obj, columns, stmt)):
                acc.add(batch)
            _store(store, path, "", acc)
        else:
            _analyze_partitions(env, stmt, store, obj, columns, partitions)
    except SqlError as e:
        raise _err(stmt, f"Failed to execute ANALYZE TABLE command: {e.message}", TABLE_EXCEPTION) from None
    except Exception as e:  # noqa: BLE001 - a failed read (bad data, missing files): Flink's wrapper message
        raise _err(stmt, f"Failed to execute ANALYZE TABLE command: {e}", TABLE_EXCEPTION) from None
    return TableResult.ok()


def _analyze_partitions(
    env: TableEnvironment,
    stmt: AnalyzeTable,
    store: CatalogStore,
    table: CatalogTable,
    columns: list[Field],
    partitions: list[dict[str, str]],
) -> None:
    """One scan of the targeted partitions; every batch is split by its rows' partition
    path (the connector's `k=v/...` directory, computed with Arrow) and folded into that
    partition's accumulators. A partition without rows gets a row count of 0."""
    if not partitions:
        return
    keys = table.partitioned_by
    accs = {partition_path(p, keys): StatisticsAccumulator(columns) for p in partitions}
    scanned = columns + [Field(k, c.type) for k in keys for c in table.columns if c.name == k]
    names = list(dict.fromkeys(f.name for f in scanned))
    fields = tuple(next(f for f in scanned if f.name == n) for n in names)
    default_name = table.options.get("partition.default-name") or DEFAULT_PARTITION_NAME
    time_zone = env.get_config().get_local_timezone()
    part_idx = [names.index(k) for k in keys]
    for batch in _scan(env, _scan_sql(table, list(fields), stmt)):
        if batch.num_rows == 0:
            continue
        dirs = partition_dirs(batch, part_idx, fields, default_name, time_zone)
        for directory, rows in split_by_partition(batch, dirs):
            acc = accs.get(directory)
            if acc is not None:
                acc.add(rows)
    for directory, acc in accs.items():
        _store(store, table.path, directory, acc)


def _store(store: CatalogStore, path: tuple[str, str, str], partition: str, acc: StatisticsAccumulator) -> None:
    """Table statistics replace the old ones; column statistics are merged over them."""
    store.put_statistics(path[1], path[2], partition, "table", table_statistics_json(acc.table_statistics()))
    new = acc.column_statistics()
    if new is None:
        return
    old = store.get_statistics(path[1], path[2], partition, "columns")
    merged = column_statistics_from_json(old).get_column_statistics_data() if old else {}
    merged.update(new.get_column_statistics_data())
    store.put_statistics(
        path[1], path[2], partition, "columns", column_statistics_json(CatalogColumnStatistics(merged))
    )
