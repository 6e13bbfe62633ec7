"""Executors that run a JobGraph: `local` (embedded, default)."""
