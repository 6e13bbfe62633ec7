"""The `streamsql` command with a Python function that raises: the job fails with exit
code 1 (a failed job, not 2: no "internal error"), the message names the function and
shows the user's file and line, no streamsql frame; for a scalar and an aggregate
function (the other kinds run in-process: tests/unit/streamsql/test_udf_errors.py)."""

from __future__ import annotations

from pathlib import Path

from clitools import run_cli

UDFS = """
from streamsql import DataTypes
from streamsql.udf import AggregateFunction, udaf, udf


@udf(result_type=DataTypes.BIGINT())
def sboom(v):
    if v == 3:
        raise ValueError("no threes here either")
    return v


class Total(AggregateFunction):
    def create_accumulator(self):
        return [0]

    def accumulate(self, acc, v):
        if v == 3:
            raise ValueError("no threes in totals")
        acc[0] += v

    def get_value(self, acc):
        return acc[0]


total = udaf(Total(), result_type=DataTypes.BIGINT(), accumulator_type=DataTypes.ARRAY(DataTypes.BIGINT()))
"""


def _run(tmp_path: Path, sql: str) -> tuple[int, str]:
    (tmp_path / "myudfs.py").write_text(UDFS)
    (tmp_path / "job.sql").write_text(sql)
    p = run_cli("-f", "job.sql", cwd=tmp_path)  # the working directory is on the import path
    return p.returncode, p.stderr


def _assert_user_error(code: int, err: str, headline: str, line: int) -> None:
    assert code == 1, err
    assert f"UserFunctionError: {headline}" in err, err
    assert 'myudfs.py", line ' + str(line) in err, err
    assert "internal error" not in err and "This is a bug" not in err
    assert "/runtime/" not in err and "/streamsql/" not in err  # none of streamsql's frames


def test_a_failing_scalar_function_is_a_job_error_with_the_user_s_line(tmp_path: Path) -> None:
    code, err = _run(
        tmp_path,
        "SET 'execution.runtime-mode' = 'batch';\n"
        "CREATE TEMPORARY FUNCTION sboom AS 'myudfs.sboom' LANGUAGE PYTHON;\n"
        "SELECT sboom(x) FROM (VALUES (1), (3)) t(x);\n",
    )
    _assert_user_error(code, err, "The Python function 'sboom' failed on a row: ValueError: no threes here either", 9)


def test_a_failing_aggregate_function_is_a_job_error_with_the_user_s_line(tmp_path: Path) -> None:
    code, err = _run(
        tmp_path,
        "CREATE TEMPORARY FUNCTION total AS 'myudfs.total' LANGUAGE PYTHON;\n"
        "SELECT k, total(x) FROM (VALUES ('a', 1), ('b', 3)) t(k, x) GROUP BY k;\n",
    )
    _assert_user_error(code, err, "The Python function 'total' failed on a row: ValueError: no threes in totals", 19)
    assert ", in accumulate" in err
