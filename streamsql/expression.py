"""`pyflink.table.expression`'s names: the `Expression` class and the enums its methods take.

A PyFlink program imports `from pyflink.table.expression import TimeIntervalUnit` or
`JsonOnNull`; under streamsql's import rule (docs/table_api.md: `pyflink.table` →
`streamsql`) that is `from streamsql.expression import ...`. The enums are defined in
streamsql.expression_enums and `Expression` in streamsql.expressions; this module is the
path PyFlink programs import them from.
"""

from __future__ import annotations

from streamsql.expression_enums import (
    JsonExistsOnError,
    JsonOnNull,
    JsonQueryOnEmptyOrError,
    JsonQueryWrapper,
    JsonType,
    JsonValueOnEmptyOrError,
    TimeIntervalUnit,
    TimePointUnit,
)
from streamsql.expressions import Expression

__all__ = [
    "Expression",
    "JsonExistsOnError",
    "JsonOnNull",
    "JsonQueryOnEmptyOrError",
    "JsonQueryWrapper",
    "JsonType",
    "JsonValueOnEmptyOrError",
    "TimeIntervalUnit",
    "TimePointUnit",
]
