"""Flink's documented Table & SQL options that have nothing to act on in streamsql.

Flink's configuration page (docs/dev/table/config.md) documents every `table.exec.*`,
`table.optimizer.*` and `table.*` key of `ExecutionConfigOptions`, `OptimizerConfigOptions`
and `TableConfigOptions`. The keys streamsql implements are declared with the code that
reads them (mini-batch in planner/optimizer/mini_batch.py, state TTL in
runtime/state/ttl.py, ...). This module declares the rest, with Flink's type and default,
so that `SET` checks their values as Flink does, a script written for Flink runs unchanged,
and docs/configuration.md says what each one does here:

- most tune machinery streamsql does not have (generated code, operator fusion, async
  state, join reordering, runtime filters, sort-merge spill files, operator UIDs): any
  valid value is accepted and changes nothing, as the description says;
- a few would change results (or fail statements) with a non-default value that streamsql
  does not implement: those accept their default only, and `SET` of another value fails
  naming the key and why (`check`), rather than silently computing something else.

tests/unit/streamsql/test_flink_config_keys.py lists Flink's documented keys and checks each
is declared with Flink's type and default.
"""

from __future__ import annotations

from runtime.config.options import key

_NO_ASYNC = "streamsql calls lookups and functions synchronously, a batch at a time: no effect."
_NO_CODEGEN = "streamsql generates no code (operators are vectorized Python over Arrow): no effect."
_NO_COST_OPTIMIZER = "streamsql's planner has no cost-based search (it keeps the query's join order): no effect."
_NO_BATCH_TUNING = (
    "Flink's batch operator tuning; streamsql's batch operators spill differently (io.tmp.dirs): no effect."
)

# -- table.exec.* -------------------------------------------------------------------------
ASYNC_LOOKUP_BUFFER_CAPACITY = (
    key("table.exec.async-lookup.buffer-capacity")
    .int_type()
    .default_value(100)
    .with_description(f"Flink's async lookup join queue size. {_NO_ASYNC}")
)
ASYNC_LOOKUP_KEY_ORDERED = (
    key("table.exec.async-lookup.key-ordered-enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"Flink's async lookup join ordering per upsert key; lookups here keep input order. {_NO_ASYNC}")
)
ASYNC_LOOKUP_OUTPUT_MODE = (
    key("table.exec.async-lookup.output-mode")
    .enum_type("ORDERED", "ALLOW_UNORDERED")
    .default_value("ORDERED")
    .with_description(f"Flink's async lookup join output order; lookups here keep input order. {_NO_ASYNC}")
)
ASYNC_LOOKUP_TIMEOUT = (
    key("table.exec.async-lookup.timeout")
    .duration_type()
    .default_value(3 * 60_000)
    .with_description(f"Flink's async lookup timeout. {_NO_ASYNC}")
)
ASYNC_ML_PREDICT_MAX_CONCURRENT = (
    key("table.exec.async-ml-predict.max-concurrent-operations")
    .int_type()
    .default_value(10)
    .with_description(
        "Flink's async ML_PREDICT concurrency; ML_PREDICT needs Flink's model providers (a JVM): no effect."
    )
)
ASYNC_ML_PREDICT_OUTPUT_MODE = (
    key("table.exec.async-ml-predict.output-mode")
    .enum_type("ORDERED", "ALLOW_UNORDERED")
    .default_value("ORDERED")
    .with_description("Flink's async ML_PREDICT output order; ML_PREDICT needs Flink's model providers: no effect.")
)
ASYNC_ML_PREDICT_TIMEOUT = (
    key("table.exec.async-ml-predict.timeout")
    .duration_type()
    .default_value(3 * 60_000)
    .with_description("Flink's async ML_PREDICT timeout; ML_PREDICT needs Flink's model providers: no effect.")
)
ASYNC_STATE_ENABLED = (
    key("table.exec.async-state.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Flink's operators on the asynchronous state API; streamsql's keyed state is read in batches: no effect."
    )
)
ASYNC_TABLE_MAX_CONCURRENT = (
    key("table.exec.async-table.max-concurrent-operations")
    .int_type()
    .default_value(10)
    .with_description(f"Flink's async table function concurrency. {_NO_ASYNC}")
)
ASYNC_TABLE_MAX_RETRIES = (
    key("table.exec.async-table.max-retries")
    .int_type()
    .default_value(3)
    .with_description(f"Flink's async table function retries. {_NO_ASYNC}")
)
ASYNC_TABLE_RETRY_DELAY = (
    key("table.exec.async-table.retry-delay")
    .duration_type()
    .default_value(100)
    .with_description(f"Flink's async table function retry delay. {_NO_ASYNC}")
)
ASYNC_TABLE_RETRY_STRATEGY = (
    key("table.exec.async-table.retry-strategy")
    .enum_type("NO_RETRY", "FIXED_DELAY")
    .default_value("FIXED_DELAY")
    .with_description(f"Flink's async table function retry strategy. {_NO_ASYNC}")
)
ASYNC_TABLE_TIMEOUT = (
    key("table.exec.async-table.timeout")
    .duration_type()
    .default_value(3 * 60_000)
    .with_description(f"Flink's async table function timeout. {_NO_ASYNC}")
)
DEDUPLICATE_INSERT_UPDATE_AFTER_SENSITIVE = (
    key("table.exec.deduplicate.insert-update-after-sensitive-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(
        "Whether the first row of a keep-last-row deduplication is sent as INSERT (true) or may be an "
        "UPDATE_AFTER (false). streamsql always sends INSERT, which both settings allow."
    )
)
DEDUPLICATE_MINI_BATCH_COMPACT = (
    key("table.exec.deduplicate.mini-batch.compact-changes-enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Flink: compact a rowtime deduplication's changes within a mini-batch. streamsql sends every change "
        "(what false does); the final table is the same either way."
    )
)
DISABLED_OPERATORS = (
    key("table.exec.disabled-operators")
    .string_type()
    .no_default_value()
    .with_description(
        "Flink's test switch to rule out batch join/aggregate algorithms (NestedLoopJoin, HashAgg, ...); "
        "streamsql has one algorithm per operator: no effect."
    )
)
INTERVAL_JOIN_MIN_CLEANUP = (
    key("table.exec.interval-join.min-cleanup-interval")
    .duration_type()
    .default_value(0)
    .with_description(
        "Flink: delay the clean-up (and outer-join padding) of unmatched interval-join rows. streamsql cleans "
        "up and pads as the watermark passes, which is Flink's default 0."
    )
    .with_check(lambda v: v == 0, "0 ms (streamsql cleans up unmatched interval-join rows as the watermark passes)")
)
LEGACY_CAST_BEHAVIOUR = (
    key("table.exec.legacy-cast-behaviour")
    .enum_type("ENABLED", "DISABLED")
    .default_value("DISABLED")
    .with_check(lambda v: v == "DISABLED", "DISABLED (streamsql implements Flink's current CAST only)")
    .with_description("CAST as before Flink 1.15 (ENABLED) or as now (DISABLED); only DISABLED is implemented.")
)
LOCAL_HASH_AGG_RATE = (
    key("table.exec.local-hash-agg.adaptive.distinct-value-rate-threshold")
    .float_type()
    .default_value(0.5)
    .with_description(f"Flink's adaptive local hash aggregation. {_NO_BATCH_TUNING}")
)
LOCAL_HASH_AGG_ADAPTIVE = (
    key("table.exec.local-hash-agg.adaptive.enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's adaptive local hash aggregation. {_NO_BATCH_TUNING}")
)
LOCAL_HASH_AGG_SAMPLING = (
    key("table.exec.local-hash-agg.adaptive.sampling-threshold")
    .long_type()
    .default_value(500000)
    .with_description(f"Flink's adaptive local hash aggregation. {_NO_BATCH_TUNING}")
)
OPERATOR_FUSION_CODEGEN = (
    key("table.exec.operator-fusion-codegen.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"Flink: compile chained operators into one. {_NO_CODEGEN}")
)
RANK_TOPN_CACHE_SIZE = (
    key("table.exec.rank.topn-cache-size")
    .long_type()
    .default_value(10000)
    .with_description("Flink's Top-N state cache; streamsql reads a batch's keys at once: no effect.")
)
SIMPLIFY_OPERATOR_NAME = (
    key("table.exec.simplify-operator-name-enabled")
    .boolean_type()
    .default_value(True)
    .with_description("Flink's operator names in its web UI; EXPLAIN and the REST API show streamsql's: no effect.")
)
SINK_NESTED_CONSTRAINT_ENFORCER = (
    key("table.exec.sink.nested-constraint-enforcer")
    .enum_type("IGNORE", "ROWS", "ROWS_AND_COLLECTIONS")
    .default_value("IGNORE")
    .with_check(lambda v: v == "IGNORE", "IGNORE (streamsql checks the constraints of top-level columns only)")
    .with_description(
        "Whether NOT NULL and length constraints of nested fields are enforced; only IGNORE is implemented."
    )
)
SINK_ROWTIME_INSERTER = (
    key("table.exec.sink.rowtime-inserter")
    .enum_type("ENABLED", "DISABLED")
    .default_value("ENABLED")
    .with_description(
        "Flink: put the rowtime into the DataStream record's timestamp for the sink. streamsql's sinks have no "
        "record timestamp besides their columns (Kafka's `timestamp` metadata column sets it): no effect."
    )
)
SINK_UPSERT_MATERIALIZE_HIGH = (
    key("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.high")
    .long_type()
    .no_default_value()
    .with_description(
        "Flink's SinkUpsertMaterializer state layout. streamsql's SinkMaterializer keeps one layout (each key's "
        "rows in an Arrow table; the results are the same): no effect."
    )
)
SINK_UPSERT_MATERIALIZE_LOW = (
    key("table.exec.sink.upsert-materialize-strategy.adaptive.threshold.low")
    .long_type()
    .no_default_value()
    .with_description(
        "Flink's SinkUpsertMaterializer state layout. streamsql's SinkMaterializer keeps one layout (each key's "
        "rows in an Arrow table; the results are the same): no effect."
    )
)
SINK_UPSERT_MATERIALIZE_STRATEGY = (
    key("table.exec.sink.upsert-materialize-strategy.type")
    .enum_type("LEGACY", "MAP", "VALUE", "ADAPTIVE")
    .default_value("LEGACY")
    .with_description(
        "Flink's SinkUpsertMaterializer state layout. streamsql's SinkMaterializer keeps one layout (each key's "
        "rows in an Arrow table; the results are the same): no effect."
    )
)
SORT_ASYNC_MERGE = (
    key("table.exec.sort.async-merge-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's external sort. {_NO_BATCH_TUNING}")
)
SORT_MAX_FILE_HANDLES = (
    key("table.exec.sort.max-num-file-handles")
    .int_type()
    .default_value(128)
    .with_description(f"Flink's external sort fan-in. {_NO_BATCH_TUNING}")
)
SPILL_COMPRESSION_BLOCK_SIZE = (
    key("table.exec.spill-compression.block-size")
    .memory_type()
    .default_value(64 * 1024)
    .with_description(f"Flink's spill compression. {_NO_BATCH_TUNING}")
)
SPILL_COMPRESSION_ENABLED = (
    key("table.exec.spill-compression.enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's spill compression. {_NO_BATCH_TUNING}")
)
UID_FORMAT = (
    key("table.exec.uid.format")
    .string_type()
    .default_value("<id>_<transformation>")
    .with_description(
        "Flink's operator UID pattern for restoring state. streamsql matches state to operators by the "
        "JobGraph's node ids and a fingerprint of each operator (docs/checkpointing.md): no effect."
    )
)
UID_GENERATION = (
    key("table.exec.uid.generation")
    .enum_type("PLAN_ONLY", "ALWAYS", "DISABLED")
    .default_value("PLAN_ONLY")
    .with_description("When Flink sets operator UIDs. streamsql matches state by JobGraph node ids: no effect.")
)
UNBOUNDED_OVER_VERSION = (
    key("table.exec.unbounded-over.version")
    .int_type()
    .default_value(2)
    .with_description(
        "Which of Flink's two unbounded OVER implementations runs (same results); streamsql has one: no effect."
    )
)
WINDOW_AGG_BUFFER_LIMIT = (
    key("table.exec.window-agg.buffer-size-limit")
    .int_type()
    .default_value(100000)
    .with_description(f"Flink's batch group-window buffer. {_NO_BATCH_TUNING}")
)

# -- table.optimizer.* --------------------------------------------------------------------
BUSHY_JOIN_REORDER_THRESHOLD = (
    key("table.optimizer.bushy-join-reorder-threshold")
    .int_type()
    .default_value(12)
    .with_description(f"Flink's bushy join reordering. {_NO_COST_OPTIMIZER}")
)
DYNAMIC_FILTERING = (
    key("table.optimizer.dynamic-filtering.enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's dynamic partition pruning at run time. {_NO_COST_OPTIMIZER}")
)
INCREMENTAL_AGG = (
    key("table.optimizer.incremental-agg-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(
        "Flink: fuse the middle two of the four aggregates a local-global split-distinct plan has. streamsql "
        "keeps them apart (same results): no effect."
    )
)
JOIN_REORDER = (
    key("table.optimizer.join-reorder-enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"Flink's cost-based join reordering. {_NO_COST_OPTIMIZER}")
)
JOIN_BROADCAST_THRESHOLD = (
    key("table.optimizer.join.broadcast-threshold")
    .long_type()
    .default_value(1048576)
    .with_description(f"Flink's batch broadcast-join size limit. {_NO_COST_OPTIMIZER}")
)
MULTIPLE_INPUT = (
    key("table.optimizer.multiple-input-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's batch multiple-input operators. {_NO_CODEGEN}")
)
REUSE_OPTIMIZE_BLOCK = (
    key("table.optimizer.reuse-optimize-block-with-digest-enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"Flink's common sub-graph optimization. {_NO_COST_OPTIMIZER}")
)
REUSE_SOURCE = (
    key("table.optimizer.reuse-source-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(
        "Flink: one scan for a table read twice. streamsql plans a scan per reference, whatever the value "
        "(a random datagen table read twice gives each scan its own rows, where Flink's reused scan gives both "
        "the same)."
    )
)
REUSE_SUB_PLAN = (
    key("table.optimizer.reuse-sub-plan-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(
        "Flink: compute a repeated sub-plan once. streamsql computes each occurrence (the same rows for "
        "deterministic inputs): no effect."
    )
)
RUNTIME_FILTER = (
    key("table.optimizer.runtime-filter.enabled")
    .boolean_type()
    .default_value(False)
    .with_description(f"Flink's batch runtime filters for joins. {_NO_COST_OPTIMIZER}")
)
RUNTIME_FILTER_MAX_BUILD = (
    key("table.optimizer.runtime-filter.max-build-data-size")
    .memory_type()
    .default_value(150 * 1024 * 1024)
    .with_description(f"Flink's batch runtime filters for joins. {_NO_COST_OPTIMIZER}")
)
RUNTIME_FILTER_MIN_RATIO = (
    key("table.optimizer.runtime-filter.min-filter-ratio")
    .float_type()
    .default_value(0.5)
    .with_description(f"Flink's batch runtime filters for joins. {_NO_COST_OPTIMIZER}")
)
RUNTIME_FILTER_MIN_PROBE = (
    key("table.optimizer.runtime-filter.min-probe-data-size")
    .memory_type()
    .default_value(10 * 1024**3)
    .with_description(f"Flink's batch runtime filters for joins. {_NO_COST_OPTIMIZER}")
)
SOURCE_REPORT_STATISTICS = (
    key("table.optimizer.source.report-statistics-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's cost model input from connectors. {_NO_COST_OPTIMIZER}")
)
SQL2REL_PROJECT_MERGE = (
    key("table.optimizer.sql2rel.project-merge.enabled")
    .boolean_type()
    .default_value(False)
    .with_check(lambda v: v is False, "false (streamsql evaluates each projection as written)")
    .with_description(
        "Flink: merge projections while converting SQL, which may evaluate a non-deterministic expression "
        "more than once (FLINK-20887); only false is implemented."
    )
)
UNION_ALL_AS_BREAKPOINT = (
    key("table.optimizer.union-all-as-breakpoint-enabled")
    .boolean_type()
    .default_value(True)
    .with_description(f"Flink's optimize-block splitting at UNION ALL. {_NO_COST_OPTIMIZER}")
)
IGNORE_QUERY_HINTS = (
    key("table.optimizer.ignore-query-hints")
    .boolean_type()
    .default_value(False)
    .with_check(lambda v: v is False, "false (streamsql always applies query hints)")
    .with_description("Flink: ignore query hints (join hints, STATE_TTL, ...) when true; only false is implemented.")
)

# -- table.* ------------------------------------------------------------------------------
CATALOG_MODIFICATION_LISTENERS = (
    key("table.catalog-modification.listeners")
    .list_type()
    .no_default_value()
    .with_check(lambda v: not v, "no listener (listeners are Java factories, which need a JVM)")
    .with_description("Flink's catalog modification listener factories (Java classes); none can be given here.")
)
COLUMN_EXPANSION_STRATEGY = (
    key("table.column-expansion-strategy")
    .enum_list_type("EXCLUDE_ALIASED_VIRTUAL_METADATA_COLUMNS", "EXCLUDE_DEFAULT_VIRTUAL_METADATA_COLUMNS")
    .default_value(())
    .with_check(lambda v: not v, "an empty list (SELECT * keeps every top-level column, Flink's default)")
    .with_description(
        "Which virtual metadata columns SELECT * leaves out; only Flink's default (none: every top-level "
        "column) is implemented."
    )
)
DYNAMIC_TABLE_OPTIONS = (
    key("table.dynamic-table-options.enabled")
    .boolean_type()
    .default_value(True)
    .with_check(lambda v: v is True, "true (streamsql always applies OPTIONS hints)")
    .with_description("Flink: with false, an OPTIONS table hint is an error; only true is implemented.")
)
PLAN_COMPILE_CATALOG_OBJECTS = (
    key("table.plan.compile.catalog-objects")
    .enum_type("ALL", "SCHEMA", "IDENTIFIER")
    .default_value("ALL")
    .with_description(
        "What COMPILE PLAN keeps of catalog objects. streamsql's plan file is its JobGraph, which holds "
        "everything a job needs (ALL) whatever the value."
    )
)
PLAN_RESTORE_CATALOG_OBJECTS = (
    key("table.plan.restore.catalog-objects")
    .enum_type("ALL", "ALL_ENFORCED", "IDENTIFIER")
    .default_value("ALL")
    .with_description(
        "How EXECUTE PLAN uses the catalog. streamsql's plan file holds everything the job needs and is run "
        "as it is, whatever the value."
    )
)
RESOURCES_DOWNLOAD_DIR = (
    key("table.resources.download-dir")
    .string_type()
    .no_default_value()
    .with_description(
        "Where Flink downloads the jars of CREATE FUNCTION ... USING JAR (Flink's default is the JVM's "
        "java.io.tmpdir); jars need a JVM, so nothing is downloaded: no effect."
    )
)
RTAS_CTAS_ATOMICITY = (
    key("table.rtas-ctas.atomicity-enabled")
    .boolean_type()
    .default_value(False)
    .with_description(
        "Flink: run CREATE/REPLACE TABLE AS atomically when the sink supports staging. No streamsql sink "
        "does, so the statement is not atomic either way (as in Flink with such a sink)."
    )
)
