"""`pyflink.common`'s names that a Table API program uses (import rule: `pyflink.common` →
`streamsql.common`).

`Row`, `RowKind`, `Configuration`, `Duration`, `Time`, `Instant`, `Types`, `JobStatus`,
`JobID`, `JobClient`, `JobExecutionResult`, `CompletableFuture`, `ConfigOptions` work as in
PyFlink. The DataStream API's serialization schemas, watermark strategies, execution config
and restart strategies exist by name and raise `JvmRequiredError` when used.
"""

from __future__ import annotations

import concurrent.futures
import datetime
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, Any

from runtime import types as t_
from runtime.types import DataType
from streamsql.row import Row, RowKind
from streamsql.unsupported import DATASTREAM, JAVA, jvm_only_class, refuse

if TYPE_CHECKING:
    from streamsql.result import JobHandle

__all__ = [
    "AssignerWithPeriodicWatermarksWrapper",
    "ByteArraySchema",
    "CompletableFuture",
    "ConfigOption",
    "ConfigOptions",
    "Configuration",
    "DeserializationSchema",
    "Duration",
    "Encoder",
    "ExecutionConfig",
    "InputDependencyConstraint",
    "Instant",
    "JobClient",
    "JobExecutionResult",
    "JobID",
    "JobStatus",
    "RestartStrategies",
    "RestartStrategyConfiguration",
    "Row",
    "RowKind",
    "SerializationSchema",
    "SimpleStringSchema",
    "Time",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
]


class Configuration:
    """A key/value configuration, as PyFlink's (values kept as strings, typed getters)."""

    def __init__(self, other: Configuration | None = None, j_configuration: Any = None) -> None:
        self._map: dict[str, str] = dict(other._map) if other is not None else {}

    @classmethod
    def from_dict(cls, map: dict[str, Any]) -> Configuration:  # noqa: A002 - PyFlink's parameter name
        conf = cls()
        for k, v in map.items():
            conf.set_string(str(k), _to_text(v))
        return conf

    @staticmethod
    def parse_list_value(value: str) -> list[str]:
        """A `;`-separated list value, as Flink writes list options."""
        return [] if not value else [p for p in value.split(";") if p != ""]

    def get_string(self, key: str, default_value: str) -> str:
        return self._map.get(key, default_value)

    def set_string(self, key: str, value: str) -> Configuration:
        self._map[key] = value
        return self

    def get_integer(self, key: str, default_value: int) -> int:
        v = self._map.get(key)
        return default_value if v is None else int(v)

    def set_integer(self, key: str, value: int) -> Configuration:
        self._map[key] = str(int(value))
        return self

    def get_float(self, key: str, default_value: float) -> float:
        v = self._map.get(key)
        return default_value if v is None else float(v)

    def set_float(self, key: str, value: float) -> Configuration:
        self._map[key] = repr(float(value))
        return self

    def get_boolean(self, key: str, default_value: bool) -> bool:
        v = self._map.get(key)
        return default_value if v is None else v.strip().lower() == "true"

    def set_boolean(self, key: str, value: bool) -> Configuration:
        self._map[key] = "true" if value else "false"
        return self

    def get_bytearray(self, key: str, default_value: bytearray) -> bytearray:
        v = self._map.get(key)
        return default_value if v is None else bytearray(bytes.fromhex(v))

    def set_bytearray(self, key: str, value: bytearray) -> Configuration:
        self._map[key] = bytes(value).hex()
        return self

    def key_set(self) -> set[str]:
        return set(self._map)

    def add_all_to_dict(self, target_dict: dict[str, Any]) -> None:
        target_dict.update(self._map)

    def add_all(self, other: Configuration, prefix: str | None = None) -> Configuration:
        for k, v in other._map.items():
            self._map[(prefix or "") + k] = v
        return self

    def contains_key(self, key: str) -> bool:
        return key in self._map

    def to_dict(self) -> dict[str, str]:
        return dict(self._map)

    def remove_config(self, key: str) -> bool:
        return self._map.pop(key, None) is not None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Configuration) and other._map == self._map

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Configuration({self._map})"


def _to_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Duration:
    """A time span (PyFlink wraps java.time.Duration): `Duration.of_seconds(10)`."""

    def __init__(self, j_duration: Any = None, *, millis: int = 0, nanos: int = 0) -> None:
        self._nanos = int(millis) * 1_000_000 + int(nanos)

    @staticmethod
    def of_days(days: int) -> Duration:
        return Duration(millis=days * 86_400_000)

    @staticmethod
    def of_hours(hours: int) -> Duration:
        return Duration(millis=hours * 3_600_000)

    @staticmethod
    def of_minutes(minutes: int) -> Duration:
        return Duration(millis=minutes * 60_000)

    @staticmethod
    def of_seconds(seconds: int) -> Duration:
        return Duration(millis=seconds * 1000)

    @staticmethod
    def of_millis(millis: int) -> Duration:
        return Duration(millis=millis)

    @staticmethod
    def of_nanos(nanos: int) -> Duration:
        return Duration(nanos=nanos)

    def to_millis(self) -> int:
        return self._nanos // 1_000_000

    def to_timedelta(self) -> datetime.timedelta:
        return datetime.timedelta(microseconds=self._nanos // 1000)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Duration) and other._nanos == self._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __str__(self) -> str:
        return f"{self.to_millis()} ms"

    def __repr__(self) -> str:
        return f"Duration.of_millis({self.to_millis()})"


class Time:
    """PyFlink's (deprecated) time span in milliseconds: `Time.seconds(10)`."""

    def __init__(self, milliseconds: int) -> None:
        self._milliseconds = int(milliseconds)

    def to_milliseconds(self) -> int:
        return self._milliseconds

    @staticmethod
    def milliseconds(milliseconds: int) -> Time:
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> Time:
        return Time(seconds * 1000)

    @staticmethod
    def minutes(minutes: int) -> Time:
        return Time(minutes * 60_000)

    @staticmethod
    def hours(hours: int) -> Time:
        return Time(hours * 3_600_000)

    @staticmethod
    def days(days: int) -> Time:
        return Time(days * 86_400_000)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and other._milliseconds == self._milliseconds

    def __hash__(self) -> int:
        return hash(self._milliseconds)

    def __str__(self) -> str:
        return f"{self._milliseconds} ms"


class Instant:
    """A point in time: seconds and nanoseconds since the epoch."""

    def __init__(self, seconds: int, nanos: int) -> None:
        self.seconds = seconds
        self.nanos = nanos

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> Instant:
        return Instant(epoch_milli // 1000, epoch_milli % 1000 * 1_000_000)

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // 1_000_000

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instant) and (other.seconds, other.nanos) == (self.seconds, self.nanos)

    def __hash__(self) -> int:
        return hash((self.seconds, self.nanos))

    def __repr__(self) -> str:
        return f"Instant<{self.seconds}, {self.nanos}>"


class TypeInformation:
    """A DataStream type (`Types.STRING()`); in streamsql it stands for the SQL type it maps to."""

    def __init__(self, data_type: DataType | None = None, name: str = "") -> None:
        self._data_type = data_type
        self._name = name

    def need_conversion(self) -> bool:
        return False

    def to_internal_type(self, obj: Any) -> Any:
        return obj

    def from_internal_type(self, obj: Any) -> Any:
        return obj

    def get_java_type_info(self) -> Any:
        refuse("TypeInformation.get_java_type_info", JAVA)

    def to_data_type(self) -> DataType:
        """The SQL type this type information stands for."""
        if self._data_type is None:
            raise TypeError(f"{self._name} has no SQL type")
        return self._data_type

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeInformation) and other._data_type == self._data_type

    def __hash__(self) -> int:
        return hash(self._data_type)

    def __repr__(self) -> str:
        return self._name or str(self._data_type)


def _ti(name: str, dt: DataType | None) -> TypeInformation:
    return TypeInformation(dt, name)


class Types:
    """PyFlink's `Types` factory; each type information carries the SQL type it maps to."""

    @staticmethod
    def STRING() -> TypeInformation:  # noqa: N802 - PyFlink's spelling
        return _ti("String", t_.STRING())

    @staticmethod
    def BYTE() -> TypeInformation:  # noqa: N802
        return _ti("Byte", t_.TINYINT())

    @staticmethod
    def BOOLEAN() -> TypeInformation:  # noqa: N802
        return _ti("Boolean", t_.BOOLEAN())

    @staticmethod
    def SHORT() -> TypeInformation:  # noqa: N802
        return _ti("Short", t_.SMALLINT())

    @staticmethod
    def INT() -> TypeInformation:  # noqa: N802
        return _ti("Integer", t_.INT())

    @staticmethod
    def LONG() -> TypeInformation:  # noqa: N802
        return _ti("Long", t_.BIGINT())

    @staticmethod
    def FLOAT() -> TypeInformation:  # noqa: N802
        return _ti("Float", t_.FLOAT())

    @staticmethod
    def DOUBLE() -> TypeInformation:  # noqa: N802
        return _ti("Double", t_.DOUBLE())

    @staticmethod
    def CHAR() -> TypeInformation:  # noqa: N802
        return _ti("Character", t_.CHAR(1))

    @staticmethod
    def BIG_INT() -> TypeInformation:  # noqa: N802
        return _ti("BigInteger", t_.DECIMAL(38, 0))

    @staticmethod
    def BIG_DEC() -> TypeInformation:  # noqa: N802
        return _ti("BigDecimal", t_.DECIMAL(38, 18))

    @staticmethod
    def INSTANT() -> TypeInformation:  # noqa: N802
        return _ti("Instant", t_.TIMESTAMP_LTZ(9))

    @staticmethod
    def SQL_DATE() -> TypeInformation:  # noqa: N802
        return _ti("Date", t_.DATE())

    @staticmethod
    def SQL_TIME() -> TypeInformation:  # noqa: N802
        return _ti("Time", t_.TIME(0))

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:  # noqa: N802
        return _ti("Timestamp", t_.TIMESTAMP(3))

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:  # noqa: N802
        return _ti("PickledByteArray", t_.BYTES())

    @staticmethod
    def ROW(field_types: list[TypeInformation]) -> TypeInformation:  # noqa: N802
        return _ti("Row", t_.ROW([(f"f{i}", f.to_data_type()) for i, f in enumerate(field_types)]))

    @staticmethod
    def ROW_NAMED(field_names: list[str], field_types: list[TypeInformation]) -> TypeInformation:  # noqa: N802
        return _ti("Row", t_.ROW([(n, f.to_data_type()) for n, f in zip(field_names, field_types, strict=True)]))

    @staticmethod
    def TUPLE(field_types: list[TypeInformation]) -> TypeInformation:  # noqa: N802
        return _ti("Tuple", t_.ROW([(f"f{i}", f.to_data_type()) for i, f in enumerate(field_types)]))

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:  # noqa: N802
        return _ti("PrimitiveArray", t_.ARRAY(element_type.to_data_type()))

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:  # noqa: N802
        return _ti("BasicArray", t_.ARRAY(element_type.to_data_type()))

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:  # noqa: N802
        return _ti("ObjectArray", t_.ARRAY(element_type.to_data_type()))

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:  # noqa: N802
        return _ti("List", t_.ARRAY(element_type_info.to_data_type()))

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:  # noqa: N802
        return _ti("Map", t_.MAP(key_type_info.to_data_type(), value_type_info.to_data_type()))


class JobStatus(Enum):
    """The state of a job, as Flink names them."""

    CREATED = 0
    RUNNING = 1
    FAILING = 2
    FAILED = 3
    CANCELLING = 4
    CANCELED = 5
    FINISHED = 6
    RESTARTING = 7
    SUSPENDED = 8
    RECONCILING = 9
    INITIALIZING = 10

    def is_globally_terminal_state(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)

    def is_terminal_state(self) -> bool:
        return self.is_globally_terminal_state() or self is JobStatus.SUSPENDED


class JobID:
    """A job's id (printed as its hexadecimal text)."""

    def __init__(self, j_job_id: Any) -> None:
        self._id = str(j_job_id)

    def to_hex_string(self) -> str:
        return self._id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobID) and other._id == self._id

    def __hash__(self) -> int:
        return hash(self._id)

    def __str__(self) -> str:
        return self._id

    __repr__ = __str__


class CompletableFuture:
    """A result that becomes available later (`result()` waits for it), as PyFlink's."""

    def __init__(self, j_completable_future: Any = None, py_class: Any = None) -> None:
        self._future: concurrent.futures.Future[Any] = (
            j_completable_future if isinstance(j_completable_future, concurrent.futures.Future) else _done(None)
        )

    @staticmethod
    def of(fn: Callable[[], Any]) -> CompletableFuture:
        """A future completed now with fn()'s value or exception."""
        f: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            f.set_result(fn())
        except Exception as e:  # noqa: BLE001 - delivered through result()/exception()
            f.set_exception(e)
        return CompletableFuture(f)

    def cancel(self) -> bool:
        return self._future.cancel()

    def cancelled(self) -> bool:
        return self._future.cancelled()

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> Any:
        return self._future.result()

    def exception(self) -> BaseException | None:
        return self._future.exception()

    def __str__(self) -> str:
        return f"CompletableFuture(done={self.done()})"


def _done(value: Any) -> concurrent.futures.Future[Any]:
    f: concurrent.futures.Future[Any] = concurrent.futures.Future()
    f.set_result(value)
    return f


class JobExecutionResult:
    """What a finished job reports: its id and net run time."""

    def __init__(self, j_job_execution_result: Any) -> None:
        self._job_id, self._net_runtime_ms = j_job_execution_result

    def get_job_id(self) -> JobID:
        return JobID(self._job_id)

    def get_net_runtime(self) -> int:
        return int(self._net_runtime_ms)

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        return None

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return {}


class JobClient:
    """PyFlink's JobClient over a running streamsql job: every call answers a CompletableFuture."""

    def __init__(self, j_job_client: JobHandle) -> None:
        self._handle = j_job_client

    def get_job_id(self) -> JobID:
        return JobID(self._handle.get_job_id())

    def get_job_status(self) -> CompletableFuture:
        return CompletableFuture.of(lambda: JobStatus[self._handle.get_job_status()])

    def cancel(self) -> CompletableFuture:
        return CompletableFuture.of(self._handle.cancel)

    def stop_with_savepoint(
        self, advance_to_end_of_event_time: bool = False, savepoint_directory: str | None = None
    ) -> CompletableFuture:
        """Take a savepoint and stop; the future's value is the savepoint's path. With
        `advance_to_end_of_event_time` the sources send MAX_WATERMARK first, so every
        window fires before the savepoint (Flink's `--drain`)."""
        return CompletableFuture.of(
            lambda: self._handle.stop_with_savepoint(savepoint_directory, drain=advance_to_end_of_event_time)
        )

    def trigger_savepoint(self, savepoint_directory: str | None = None) -> CompletableFuture:
        return CompletableFuture.of(lambda: self._handle.trigger_savepoint(savepoint_directory))

    def get_accumulators(self) -> CompletableFuture:
        return CompletableFuture.of(dict)

    def get_job_execution_result(self) -> CompletableFuture:
        def wait() -> JobExecutionResult:
            self._handle.wait()
            end = self._handle.end_time or self._handle.start_time
            return JobExecutionResult((self._handle.get_job_id(), int((end - self._handle.start_time) * 1000)))

        f: concurrent.futures.Future[Any] = concurrent.futures.Future()
        import threading

        def run() -> None:
            try:
                f.set_result(wait())
            except BaseException as e:  # noqa: BLE001 - delivered through result()
                f.set_exception(e)

        threading.Thread(target=run, daemon=True).start()
        return CompletableFuture(f)

    # streamsql additions (not in PyFlink): the job's liveness and metrics
    def is_running(self) -> bool:
        return self._handle.is_running()

    def metrics(self) -> list[dict[str, Any]]:
        return self._handle.metrics()


class ConfigOption:
    """A configuration key with its default (`ConfigOptions.key(k).string_type().default_value(v)`)."""

    def __init__(self, j_config_option: Any = None, *, key: str = "", default: Any = None) -> None:
        self.key = key
        self.default = default

    def __repr__(self) -> str:
        return f"ConfigOption(key={self.key!r}, default={self.default!r})"


class _OptionBuilder:
    def __init__(self, key: str) -> None:
        self._key = key

    def __getattr__(self, name: str) -> Callable[[], _OptionBuilder]:
        # boolean_type(), int_type(), string_type(), duration_type(), ...: the type only
        # documents the option here; values are validated by streamsql's own declarations.
        if name.endswith("_type"):
            return lambda: self
        raise AttributeError(name)

    def default_value(self, value: Any) -> ConfigOption:
        return ConfigOption(key=self._key, default=value)

    def no_default_value(self) -> ConfigOption:
        return ConfigOption(key=self._key)


class ConfigOptions:
    """Builder of `ConfigOption`s: `ConfigOptions.key('x').int_type().default_value(1)`."""

    def __init__(self, j_config_options: Any = None) -> None:
        pass

    @staticmethod
    def key(key: str) -> Any:
        return _OptionBuilder(key)


AssignerWithPeriodicWatermarksWrapper = jvm_only_class("AssignerWithPeriodicWatermarksWrapper", DATASTREAM)
ByteArraySchema = jvm_only_class("ByteArraySchema", DATASTREAM)
DeserializationSchema = jvm_only_class("DeserializationSchema", DATASTREAM)
Encoder = jvm_only_class("Encoder", DATASTREAM)
ExecutionConfig = jvm_only_class("ExecutionConfig", DATASTREAM)
InputDependencyConstraint = jvm_only_class("InputDependencyConstraint", DATASTREAM)
RestartStrategies = jvm_only_class(
    "RestartStrategies", "set 'restart-strategy.type' and its options in the table configuration instead"
)
RestartStrategyConfiguration = jvm_only_class(
    "RestartStrategyConfiguration", "set 'restart-strategy.type' and its options in the table configuration instead"
)
SerializationSchema = jvm_only_class("SerializationSchema", DATASTREAM)
SimpleStringSchema = jvm_only_class("SimpleStringSchema", DATASTREAM)
TypeSerializer = jvm_only_class("TypeSerializer", DATASTREAM)
WatermarkStrategy = jvm_only_class(
    "WatermarkStrategy", DATASTREAM + "; declare a WATERMARK in the table's schema (Schema.watermark)"
)
