"""The enums `pyflink.table.expression` exports (served there by streamsql.expression): the
arguments of Expression methods. Each member's value is the SQL text it renders to, which
is all an expression needs of it. Kept apart from streamsql.expressions, which imports them.
"""

from __future__ import annotations

from enum import Enum


class TimeIntervalUnit(Enum):
    """Units for `extract`, `floor` and `ceil`."""

    YEAR = "YEAR"
    YEAR_TO_MONTH = "YEAR TO MONTH"
    QUARTER = "QUARTER"
    MONTH = "MONTH"
    WEEK = "WEEK"
    DAY = "DAY"
    DAY_TO_HOUR = "DAY TO HOUR"
    DAY_TO_MINUTE = "DAY TO MINUTE"
    DAY_TO_SECOND = "DAY TO SECOND"
    HOUR = "HOUR"
    SECOND = "SECOND"
    HOUR_TO_MINUTE = "HOUR TO MINUTE"
    HOUR_TO_SECOND = "HOUR TO SECOND"
    MINUTE = "MINUTE"
    MINUTE_TO_SECOND = "MINUTE TO SECOND"
    MILLISECOND = "MILLISECOND"


class TimePointUnit(Enum):
    """Units for `timestamp_diff` and temporal points."""

    YEAR = "YEAR"
    MONTH = "MONTH"
    DAY = "DAY"
    HOUR = "HOUR"
    MINUTE = "MINUTE"
    SECOND = "SECOND"
    QUARTER = "QUARTER"
    WEEK = "WEEK"
    MILLISECOND = "MILLISECOND"
    MICROSECOND = "MICROSECOND"


class JsonType(Enum):
    """The JSON type `is_json(json_type)` checks for (`IS JSON VALUE|SCALAR|ARRAY|OBJECT`)."""

    VALUE = "VALUE"
    SCALAR = "SCALAR"
    ARRAY = "ARRAY"
    OBJECT = "OBJECT"


class JsonExistsOnError(Enum):
    """What `json_exists` answers when the path expression fails."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    UNKNOWN = "UNKNOWN"
    ERROR = "ERROR"


class JsonValueOnEmptyOrError(Enum):
    """What `json_value` answers for a missing value or an error."""

    NULL = "NULL"
    ERROR = "ERROR"
    DEFAULT = "DEFAULT"


class JsonQueryWrapper(Enum):
    """Whether `json_query` wraps its result in an array."""

    WITHOUT_ARRAY = "WITHOUT ARRAY"
    CONDITIONAL_ARRAY = "WITH CONDITIONAL ARRAY"
    UNCONDITIONAL_ARRAY = "WITH UNCONDITIONAL ARRAY"


class JsonQueryOnEmptyOrError(Enum):
    """What `json_query` answers for a missing value or an error."""

    NULL = "NULL"
    EMPTY_ARRAY = "EMPTY ARRAY"
    EMPTY_OBJECT = "EMPTY OBJECT"
    ERROR = "ERROR"


class JsonOnNull(Enum):
    """How `json_object` / `json_array` treat NULL values (`NULL ON NULL` / `ABSENT ON NULL`)."""

    NULL = "NULL"
    ABSENT = "ABSENT"
