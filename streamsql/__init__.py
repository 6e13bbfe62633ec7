"""streamsql: Flink SQL in Python, with no JVM."""
