"""Planner extensions, one module per operator family (joins, ranking, OVER, set ops,
MATCH_RECOGNIZE, ...). A module here defines its logical nodes and registers:

- `planner.physical.register_physical(LogicalCls)`: logical → physical conversion (the
  physical operator's changelog mode, EXPLAIN line, ... are its spec's, in
  runtime/operators/; logical nodes render themselves when they define `explain_line()`
  and prune themselves with `prune_columns`).

Modules register on import; `load_rules()` imports them all (the physical phase calls it
when a logical node has no converter yet).
"""

from __future__ import annotations

from runtime.plugins import import_submodules


def load_rules() -> None:
    """Import every rule module once (they register themselves on import)."""
    import_submodules(__name__)
