"""The CLI progress line: rows read out of the sources' known total, only on a terminal."""

from __future__ import annotations

import io
import time

from streamsql import EnvironmentSettings, TableEnvironment
from streamsql.progress import ProgressBar, render, source_progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_render_with_and_without_total() -> None:
    assert render(50, 200, width=10) == "[##........]  25.0%  50/200 rows"
    assert render(1234, None) == "1,234 rows read"


def test_bar_draws_on_a_terminal_and_clears_itself() -> None:
    out = _Tty()
    with ProgressBar(out, lambda: (5, 10), interval=0.01):
        deadline = time.monotonic() + 60  # the bar's thread draws once it gets a core
        while "5/10 rows" not in out.getvalue():
            assert time.monotonic() < deadline, "the bar never drew"
            time.sleep(0.01)
    text = out.getvalue()
    assert "50.0%  5/10 rows" in text
    assert text.endswith("\r")


def test_nothing_when_not_a_terminal() -> None:
    out = io.StringIO()
    with ProgressBar(out, lambda: (5, 10), interval=0.01):
        time.sleep(0.05)
    assert out.getvalue() == ""


def test_source_progress_reads_the_job_executor() -> None:
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.execute_sql(
        "CREATE TABLE src (id BIGINT) WITH ('connector'='datagen', 'number-of-rows'='5000', "
        "'fields.id.kind'='sequence', 'fields.id.start'='1', 'fields.id.end'='5000')"
    )
    env.execute_sql("CREATE TABLE snk (id BIGINT) WITH ('connector'='blackhole')")
    result = env.execute_sql("INSERT INTO snk SELECT id FROM src")
    result.wait()
    job = result.job
    assert job is not None
    assert source_progress(job._executor()) == (5000, 5000)
    assert source_progress(None) == (0, None)
