"""Typed configuration options and their parsers (runtime layer: the runtime reads keys
from a JobGraph's config, and neither the planner nor streamsql may be imported here).

Declarations live next to the code that owns them (checkpointing keys in
`runtime/checkpoint/options.py`, mini-batch keys in `planner/optimizer/mini_batch.py`,
...); `streamsql/config.py` collects them for `SET` validation, completion and the
generated `docs/configuration.md`.
"""

from runtime.config.options import ConfigOption, ConfigSource, duration_ms, key
from runtime.config.parsers import parse_duration_ms, parse_memory_size

__all__ = ["ConfigOption", "ConfigSource", "duration_ms", "key", "parse_duration_ms", "parse_memory_size"]
