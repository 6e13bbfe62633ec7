"""runtime/errors.py's translation of what a user's function raises: UserFunctionError
with the function's name, the user's frames only, the cause kept; streamsql's own
JobErrors unchanged; picklable (a parallel worker sends it to the client)."""

from __future__ import annotations

import os
import pickle

import pytest

from runtime.errors import JobError, UserFunctionError, user_code, user_function_error
from runtime.functions.python_udf import _to_array  # any streamsql frame will do

RUNTIME_DIR = os.path.dirname(os.path.abspath(_to_array.__code__.co_filename))


def _inner(v: int) -> int:
    return {1: 2}[v]  # inner-line


def _outer(v: int) -> int:
    try:
        return _inner(v)
    except KeyError as e:
        raise ValueError(f"bad value {v}") from e  # outer-line


def test_translation_names_the_function_and_shows_only_the_user_s_frames() -> None:
    with pytest.raises(UserFunctionError) as info:
        with user_code("myfn", "on a row"):
            _outer(3)
    e = info.value
    text = str(e)
    first, rest = text.split("\n", 1)
    assert first == "The Python function 'myfn' failed on a row: ValueError: bad value 3"
    assert "# inner-line" in rest and "# outer-line" in rest  # the chain, each with its line
    assert "KeyError: 3" in rest and "direct cause" in rest
    assert RUNTIME_DIR not in text  # no streamsql frame
    assert not rest.rstrip().endswith("bad value 3")  # the headline carries the error once
    assert isinstance(e.__cause__, ValueError)
    assert (e.function, e.cause_type, e.cause_message) == ("myfn", "ValueError", "bad value 3")


def test_streamsql_s_own_job_errors_pass_unchanged() -> None:
    own = JobError("Python function f returned values that are not BIGINT")
    with pytest.raises(JobError) as info:
        with user_code("f", "on a row"):
            raise own
    assert info.value is own
    assert user_function_error("f", "on a row", own) is own


def test_an_exception_without_a_message_or_user_frame() -> None:
    e = user_function_error("f", "on a batch", ZeroDivisionError())
    assert str(e) == "The Python function 'f' failed on a batch: ZeroDivisionError"


def test_it_pickles_with_its_details() -> None:
    with pytest.raises(UserFunctionError) as info:
        with user_code("myfn", "in open()"):
            _outer(3)
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is UserFunctionError and str(back) == str(info.value)
    assert back.user_traceback == info.value.user_traceback and back.function == "myfn"
