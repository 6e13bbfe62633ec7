"""Test helper (not a test module): run a SQL script end to end and apply its changelog.

Used by the aggregation-breadth tests and the property tests; `final_table` fails when a
retraction removes a row that was never emitted."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from harness import fold_changes

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.printing import jsonl_lines


def run_sql(script: str, mode: str, batch_rows: int | None = None) -> list[tuple[str, tuple[Any, ...]]]:
    """(op, rendered row) for every changelog row of the script's last statement."""
    conf: dict[str, str] = {}
    if batch_rows is not None:
        conf["table.exec.source.batch-rows"] = str(batch_rows)
    builder = EnvironmentSettings.new_instance()
    builder = builder.in_batch_mode() if mode == "batch" else builder.in_streaming_mode()
    env = TableEnvironment.create(builder.with_configuration(conf).build())
    *setup, last = env.parse(script)
    for stmt in setup:
        env.execute_statement(stmt).wait()
    result = env.execute_statement(last)
    out = []
    for line in jsonl_lines(result.batches(), result.fields, result.time_zone):
        rec = json.loads(line)
        out.append((rec["op"], tuple(rec["row"])))
    return out


def final_table(changelog: list[tuple[str, tuple[Any, ...]]]) -> Counter[tuple[Any, ...]]:
    """The strict fold of the conformance harness (its folder is on sys.path: see the
    conftest of tests/unit/runtime and tests/property, which load this module)."""
    return fold_changes(changelog)


def write_debezium(path: Path, events: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]) -> None:
    """A debezium-json file: events are (op 'c'|'u'|'d', before, after)."""
    lines = [json.dumps({"before": b, "after": a, "op": op}) for op, b, a in events]
    path.write_text("\n".join(lines) + "\n")
