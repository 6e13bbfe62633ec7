"""Run a SQL script on a runner and return its final query's changelog rows (jsonl dicts)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from streamsql import TableEnvironment
from streamsql.printing import jsonl_lines

SPARK = {"spark.master": "local[2]", "spark.sql.shuffle.partitions": "2"}


def run_script(
    sql: str, mode: str, runner: str, cwd: Path | None = None, conf: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    settings = {"execution.runtime-mode": mode, "execution.target": runner, **SPARK, **(conf or {})}
    env = TableEnvironment.create(settings)
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        *setup, last = env.parse(sql)
        for stmt in setup:
            env.execute_statement(stmt).wait()
        result = env.execute_statement(last)
        result.wait()
        return [json.loads(line) for line in jsonl_lines(result.batches(), result.fields, result.time_zone)]
    finally:
        os.chdir(old)
