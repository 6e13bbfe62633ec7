"""PyFlink names that cannot work without a JVM or the DataStream API.

They exist under their PyFlink names, so a program that imports them still loads, and the
first use raises `JvmRequiredError` saying why and what to use instead: an error at the
line that needs the JVM, not an ImportError at the top of the file.
"""

from __future__ import annotations

from typing import Any, NoReturn


class JvmRequiredError(NotImplementedError):
    """This PyFlink API needs the JVM (Java classes, the DataStream API) and has no
    streamsql equivalent."""


def refuse(name: str, why: str) -> NoReturn:
    raise JvmRequiredError(f"{name} is not available in streamsql: {why}")


def jvm_only_class(name: str, why: str) -> type:
    """A class named like PyFlink's whose construction and static calls raise JvmRequiredError."""

    class _Meta(type):
        def __getattr__(cls, attr: str) -> Any:
            if attr.startswith("__"):
                raise AttributeError(attr)
            refuse(f"{name}.{attr}", why)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        refuse(name, why)

    return _Meta(name, (), {"__init__": __init__, "__doc__": f"Not available in streamsql: {why}"})


def jvm_only_method(name: str, why: str) -> Any:
    """A method that raises JvmRequiredError when called."""

    def method(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        refuse(name, why)

    method.__name__ = name.rsplit(".", 1)[-1]
    method.__doc__ = f"Not available in streamsql: {why}"
    return method


DATASTREAM = "it belongs to PyFlink's DataStream API, which streamsql does not implement (use the Table API or SQL)"
JAVA = "it loads or calls Java classes, which needs the JVM"
