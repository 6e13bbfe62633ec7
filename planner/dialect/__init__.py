"""The sqlglot "flink" dialect: `import planner` registers it, then
`sqlglot.parse(sql, read="flink")` parses Flink SQL.

Custom nodes live in `planner.dialect.ast`; type conversion in `planner.dialect.types`.
"""

from __future__ import annotations

from planner.dialect.flink import Flink

__all__ = ["Flink"]
