"""The streamsql planner: Flink SQL text to a runtime JobGraph.

parse (sqlglot "flink" dialect) → bind (catalog, types, time attributes) → optimize
(named phases of rule functions) → lower (JobGraph). Imports `runtime`, never `streamsql`.
"""

from planner import dialect as dialect  # noqa: E402 - registers the sqlglot "flink" dialect
