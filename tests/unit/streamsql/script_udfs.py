"""Python functions the statement scripts register with CREATE FUNCTION ... LANGUAGE PYTHON."""

from streamsql.udf import DataTypes, udf


@udf(result_type=DataTypes.STRING())
def shout(s: str | None) -> str | None:
    return None if s is None else s.upper() + "!"


@udf(result_type=DataTypes.STRING())
def whisper(s: str | None) -> str | None:
    return None if s is None else s.lower() + "..."
