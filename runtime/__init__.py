"""The streamsql runtime: JobGraph, vectorized operators over Arrow, time, state,
connectors and executors. It never imports `planner` or `streamsql`."""
