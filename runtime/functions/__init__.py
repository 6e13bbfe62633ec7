"""Flink's built-in scalar functions, vectorized over Arrow. Each module registers its
functions in `registry` on import; `registry.lookup(name)` loads them all."""
