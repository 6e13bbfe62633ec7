"""Every key of Flink's Table & SQL configuration page is declared here with Flink's type
and default.

The data below is Flink's own documentation, copied by hand from the tables the page
(apache/flink docs/content/docs/dev/table/config.md) includes, as generated from the option
classes: docs/layouts/shortcodes/generated/execution_config_configuration.html
(`ExecutionConfigOptions`), optimizer_config_configuration.html (`OptimizerConfigOptions`),
table_config_configuration.html (`TableConfigOptions`),
materialized_table_config_configuration.html and sql_client_configuration.html
(`SqlClientOptions`, with the three display options Flink 1.18+ added:
`sql-client.display.color-schema`, `.print-time-cost`, `.show-line-numbers`).
Each entry is (Flink's type name, Flink's default as the page prints it).

A key whose type or default differs on purpose is in DIFFERENT, with the reason (the same
reason docs/configuration.md gives). Whether a key does what its description says is tested
where the feature is (mini-batch, state TTL, ...); keys that cannot apply without a JVM or a
cluster say so in their description and are checked below to be accepted (or refused with
that reason) by SET.
"""

from __future__ import annotations

import pytest

from runtime.errors import ConfigError
from streamsql.config import TableConfig, lookup

NONE = "(none)"

EXECUTION: dict[str, tuple[str, str]] = {
    "table.exec.async-lookup.buffer-capacity": ("Integer", "100"),
    "table.exec.async-lookup.key-ordered-enabled": ("Boolean", "false"),
    "table.exec.async-lookup.output-mode": ("Enum", "ORDERED"),
    "table.exec.async-lookup.timeout": ("Duration", "3 min"),
    "table.exec.async-ml-predict.max-concurrent-operations": ("Integer", "10"),
    "table.exec.async-ml-predict.output-mode": ("Enum", "ORDERED"),
    "table.exec.async-ml-predict.timeout": ("Duration", "3 min"),
    "table.exec.async-scalar.max-attempts": ("Integer", "3"),
    "table.exec.async-scalar.max-concurrent-operations": ("Integer", "10"),
    "table.exec.async-scalar.retry-delay": ("Duration", "100 ms"),
    "table.exec.async-scalar.retry-strategy": ("Enum", "FIXED_DELAY"),
    "table.exec.async-scalar.timeout": ("Duration", "3 min"),
    "table.exec.async-state.enabled": ("Boolean", "false"),
    "table.exec.async-table.max-concurrent-operations": ("Integer", "10"),
    "table.exec.async-table.max-retries": ("Integer", "3"),
    "table.exec.async-table.retry-delay": ("Duration", "100 ms"),
    "table.exec.async-table.retry-strategy": ("Enum", "FIXED_DELAY"),
    "table.exec.async-table.timeout": ("Duration", "3 min"),
    "table.exec.deduplicate.insert-update-after-sensitive-enabled": ("Boolean", "true"),
    "table.exec.deduplicate.mini-batch.compact-changes-enabled": ("Boolean", "false"),
    "table.exec.disabled-operators": ("String", NONE),
    "table.exec.interval-join.min-cleanup-interval": ("Duration", "0 ms"),
    "table.exec.legacy-cast-behaviour": ("Enum", "DISABLED"),
    "table.exec.local-hash-agg.adaptive.distinct-value-rate-threshold": ("Double", "0.5"),
    "table.exec.local-hash-agg.adaptive.enabled": ("Boolean", "true"),
    "table.exec.local-hash-agg.adaptive.sampling-threshold": ("Long", "500000"),
    "table.exec.mini-batch.allow-latency": ("Duration", "0 ms"),
    "table.exec.mini-batch.enabled": ("Boolean", "false"),
    "table.exec.mini-batch.size": ("Long", "-1"),
    "table.exec.operator-fusion-codegen.enabled": ("Boolean", "false"),
    "table.exec.rank.topn-cache-size": ("Long", "10000"),
    "table.exec.resource.default-parallelism": ("Integer", "-1"),
    "table.exec.simplify-operator-name-enabled": ("Boolean", "true"),
    "table.exec.sink.keyed-shuffle": ("Enum", "AUTO"),
    "table.exec.sink.nested-constraint-enforcer": ("Enum", "IGNORE"),
    "table.exec.sink.not-null-enforcer": ("Enum", "ERROR"),
    "table.exec.sink.rowtime-inserter": ("Enum", "ENABLED"),
    "table.exec.sink.type-length-enforcer": ("Enum", "IGNORE"),
    "table.exec.sink.upsert-materialize": ("Enum", "AUTO"),
    "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high": ("Long", NONE),
    "table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low": ("Long", NONE),
    "table.exec.sink.upsert-materialize-strategy.type": ("Enum", "LEGACY"),
    "table.exec.sort.async-merge-enabled": ("Boolean", "true"),
    "table.exec.sort.default-limit": ("Integer", "-1"),
    "table.exec.sort.max-num-file-handles": ("Integer", "128"),
    "table.exec.source.cdc-events-duplicate": ("Boolean", "false"),
    "table.exec.source.idle-timeout": ("Duration", "0 ms"),
    "table.exec.spill-compression.block-size": ("MemorySize", "64 kb"),
    "table.exec.spill-compression.enabled": ("Boolean", "true"),
    "table.exec.state.ttl": ("Duration", "0 ms"),
    "table.exec.uid.format": ("String", "<id>_<transformation>"),
    "table.exec.uid.generation": ("Enum", "PLAN_ONLY"),
    "table.exec.unbounded-over.version": ("Integer", "2"),
    "table.exec.window-agg.buffer-size-limit": ("Integer", "100000"),
}

OPTIMIZER: dict[str, tuple[str, str]] = {
    "table.optimizer.agg-phase-strategy": ("Enum", "AUTO"),
    "table.optimizer.bushy-join-reorder-threshold": ("Integer", "12"),
    "table.optimizer.distinct-agg.split.bucket-num": ("Integer", "1024"),
    "table.optimizer.distinct-agg.split.enabled": ("Boolean", "false"),
    "table.optimizer.dynamic-filtering.enabled": ("Boolean", "true"),
    "table.optimizer.incremental-agg-enabled": ("Boolean", "true"),
    "table.optimizer.join-reorder-enabled": ("Boolean", "false"),
    "table.optimizer.join.broadcast-threshold": ("Long", "1048576"),
    "table.optimizer.multiple-input-enabled": ("Boolean", "true"),
    "table.optimizer.non-deterministic-update.strategy": ("Enum", "IGNORE"),
    "table.optimizer.reuse-optimize-block-with-digest-enabled": ("Boolean", "false"),
    "table.optimizer.reuse-source-enabled": ("Boolean", "true"),
    "table.optimizer.reuse-sub-plan-enabled": ("Boolean", "true"),
    "table.optimizer.runtime-filter.enabled": ("Boolean", "false"),
    "table.optimizer.runtime-filter.max-build-data-size": ("MemorySize", "150 mb"),
    "table.optimizer.runtime-filter.min-filter-ratio": ("Double", "0.5"),
    "table.optimizer.runtime-filter.min-probe-data-size": ("MemorySize", "10 gb"),
    "table.optimizer.source.report-statistics-enabled": ("Boolean", "true"),
    "table.optimizer.sql2rel.project-merge.enabled": ("Boolean", "false"),
    "table.optimizer.union-all-as-breakpoint-enabled": ("Boolean", "true"),
}

TABLE: dict[str, tuple[str, str]] = {
    "table.builtin-catalog-name": ("String", "default_catalog"),
    "table.builtin-database-name": ("String", "default_database"),
    "table.catalog-modification.listeners": ("List<String>", NONE),
    "table.column-expansion-strategy": ("List<Enum>", ""),
    "table.display.max-column-width": ("Integer", "30"),
    "table.dml-sync": ("Boolean", "false"),
    "table.dynamic-table-options.enabled": ("Boolean", "true"),
    "table.generated-code.max-length": ("Integer", "4000"),
    "table.local-time-zone": ("String", "default"),
    "table.optimizer.ignore-query-hints": ("Boolean", "false"),
    "table.plan.compile.catalog-objects": ("Enum", "ALL"),
    "table.plan.force-recompile": ("Boolean", "false"),
    "table.plan.restore.catalog-objects": ("Enum", "ALL"),
    "table.resources.download-dir": ("String", 'System.getProperty("java.io.tmpdir")'),
    "table.rtas-ctas.atomicity-enabled": ("Boolean", "false"),
    "table.sql-dialect": ("String", "default"),
}

MATERIALIZED_TABLE: dict[str, tuple[str, str]] = {
    "materialized-table.refresh-mode.freshness-threshold": ("Duration", "30 min"),
    "partition.fields.#.date-formatter": ("String", NONE),
}

SQL_CLIENT: dict[str, tuple[str, str]] = {
    "sql-client.display.color-schema": ("String", "DEFAULT"),
    "sql-client.display.max-column-width": ("Integer", "30"),
    "sql-client.display.print-time-cost": ("Boolean", "true"),
    "sql-client.display.show-line-numbers": ("Boolean", "false"),
    "sql-client.execution.max-table-result.rows": ("Integer", "1000000"),
    "sql-client.execution.result-mode": ("Enum", "TABLE"),
    "sql-client.verbose": ("Boolean", "false"),
}

DOCUMENTED = {**EXECUTION, **OPTIMIZER, **TABLE, **MATERIALIZED_TABLE, **SQL_CLIENT}

# Keys declared with another default on purpose: (our default, why). docs/configuration.md
# says the same in the key's description.
DIFFERENT: dict[str, tuple[str, str]] = {
    "table.local-time-zone": (
        "UTC",
        "Flink's 'default' is the JVM's zone; streamsql's session zone is UTC unless set, so the same "
        "script gives the same result on every machine ('default' is accepted and means the machine's zone)",
    ),
    "table.resources.download-dir": (NONE, "no JVM property: unset means the system temp directory"),
    "sql-client.execution.result-mode": (
        "tableau",
        "Flink's TABLE opens a full-screen view, which a non-interactive run (-f/-e) refuses in Flink; "
        "streamsql prints results in tableau unless a shell user picks table or changelog",
    ),
}


def _doc_default(option: object) -> str:
    default = getattr(option, "default", None)
    return NONE if default is None else str(default)


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_documented_key_is_declared_with_flinks_type_and_default(name: str) -> None:
    flink_type, flink_default = DOCUMENTED[name]
    option = lookup(name)
    assert option is not None, f"{name}: documented by Flink, not declared in streamsql"
    assert option.doc_type == flink_type, f"{name}: type {option.doc_type}, Flink's is {flink_type}"
    expected = DIFFERENT[name][0] if name in DIFFERENT else flink_default
    assert _doc_default(option) == expected, f"{name}: default {_doc_default(option)!r}, Flink's is {flink_default!r}"


def test_the_differences_are_documented() -> None:
    """Each deliberate difference is a documented key, and the key's description (the
    docs/configuration.md row) says why."""
    for name in DIFFERENT:
        assert name in DOCUMENTED
        option = lookup(name)
        assert option is not None and "Flink" in option.description, name


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_set_accepts_the_documented_default(name: str) -> None:
    """`SET 'key' = '<Flink's default>'` works for every documented key (a script written
    for Flink that spells out a default runs unchanged)."""
    _, flink_default = DOCUMENTED[name]
    if flink_default in (NONE, "") or name in DIFFERENT:
        return
    TableConfig().set(name.replace("#", "f0"), flink_default)


def test_set_of_an_unknown_key_is_accepted_as_in_flink() -> None:
    """Flink's SET stores any key (its configuration is a plain map; a misspelt key is
    silently unused); streamsql does the same, and a declared key's value is checked."""
    conf = TableConfig()
    conf.set("table.exec.no-such-option", "42")
    assert conf.get("table.exec.no-such-option") == "42"
    with pytest.raises(ConfigError):
        conf.set("table.exec.mini-batch.size", "many")


# -- what the implemented keys do --------------------------------------------------------


def test_table_level_parallelism_overrides_parallelism_default() -> None:
    from runtime.config.core import job_parallelism

    assert job_parallelism({"parallelism.default": "3"}) == 3
    assert job_parallelism({"parallelism.default": "3", "table.exec.resource.default-parallelism": "-1"}) == 3
    assert job_parallelism({"parallelism.default": "1", "table.exec.resource.default-parallelism": "2"}) == 2
    with pytest.raises(ConfigError):
        TableConfig().set("table.exec.resource.default-parallelism", "0")


def test_default_time_zone_is_the_machines(monkeypatch: pytest.MonkeyPatch) -> None:
    """'default' (Flink's default value) is the machine's zone, not an unknown zone name."""
    from streamsql.environment import TableEnvironment

    monkeypatch.setenv("TZ", "Asia/Shanghai")
    env = TableEnvironment.create({"execution.runtime-mode": "batch", "table.local-time-zone": "default"})
    assert env.get_config().get_local_timezone() == "Asia/Shanghai"
    rows = env.execute_sql("SELECT CAST(TO_TIMESTAMP_LTZ(0, 3) AS STRING) AS s").collect()
    assert [str(r[0]) for r in rows] == ["1970-01-01 08:00:00.000"]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("table.exec.legacy-cast-behaviour", "ENABLED"),
        ("table.dynamic-table-options.enabled", "false"),
        ("table.optimizer.ignore-query-hints", "true"),
        ("table.column-expansion-strategy", "EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS"),
        ("table.catalog-modification.listeners", "com.example.ListenerFactory"),
    ],
)
def test_a_value_streamsql_cannot_honour_is_refused_with_the_reason(name: str, value: str) -> None:
    """A non-default value that would change results (or need a JVM) fails at SET, naming
    the key and what is accepted, instead of being silently ignored."""
    with pytest.raises(ConfigError) as e:
        TableConfig().set(name, value)
    assert name in str(e.value) and "(" in e.value.accepted


def test_an_unknown_enum_in_a_list_option_is_refused() -> None:
    with pytest.raises(ConfigError):
        TableConfig().set("table.column-expansion-strategy", "NO_SUCH_STRATEGY")


def test_result_view_keeps_the_latest_rows() -> None:
    """`sql-client.execution.max-table-result.rows`: the table view drops the oldest rows."""
    import pyarrow as pa

    from runtime.types import INT, Field
    from streamsql.shell.table_view import ResultModel

    model = ResultModel((Field("x", INT()),), "UTC", changelog=False, max_rows=3)
    model.apply(pa.record_batch({"x": pa.array(range(5), pa.int32())}))
    assert [r[0] for r in model.rows()] == ["2", "3", "4"]
    model.apply(pa.record_batch({"x": pa.array([9], pa.int32())}))
    assert [r[0] for r in model.rows()] == ["3", "4", "9"]


def test_line_numbers_in_the_shells_continuation_prompt() -> None:
    """`sql-client.display.show-line-numbers` numbers a statement's later lines."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from streamsql.environment import TableEnvironment
    from streamsql.shell.app import Shell

    env = TableEnvironment.create({})
    with create_pipe_input() as pipe:
        shell = Shell(env, input=pipe, output=DummyOutput(), history_file="/dev/null")
        assert shell.continuation(11, 1, 0).strip() == "->"
        env.get_config().set("sql-client.display.show-line-numbers", "true")
        assert shell.continuation(11, 1, 0) == "       2-> "
