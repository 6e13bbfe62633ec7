"""The optimizer: named phases, each a list of rules; a rule is a function `plan -> plan`
in its own module. `phases.PHASES` lists them in order; a rule can be switched off with
the table config key `streamsql.optimizer.disabled-rules` (comma-separated rule names)."""

from planner.optimizer.phases import LOGICAL_PHASES, optimize_logical

__all__ = ["LOGICAL_PHASES", "optimize_logical"]
