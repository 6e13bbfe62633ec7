"""The interactive shell: a prompt-toolkit prompt over a ShellSession.

Enter runs the input once it is complete (every statement ends with `;` outside strings,
comments and STATEMENT SET blocks; see `statements.is_submittable`), otherwise it starts a
new line. The prompt highlights SQL, completes on Tab, keeps a persistent history
(Up/Down, Ctrl-R) and shows a status line: runtime mode, runner, parallelism, running
jobs, result mode. Ctrl-C clears the input (or cancels a running query), Ctrl-D on an
empty line leaves.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import HTML
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style

from runtime.config.core import RUNTIME_MODE, TARGET, job_parallelism
from streamsql.client_output import INFO_QUIT
from streamsql.shell.completion import CatalogSource, make_completer
from streamsql.shell.highlight import STYLE, SqlLexer
from streamsql.shell.history import history_path, open_history
from streamsql.shell.options import MAX_TABLE_RESULT_ROWS, SHOW_LINE_NUMBERS
from streamsql.shell.session import ShellSession
from streamsql.shell.statements import is_submittable
from streamsql.shell.table_view import run_result_view

PROMPT = "streamsql> "
BANNER = "streamsql {version}. End statements with ';'. HELP; for help, QUIT; or Ctrl-D to leave.\n"


def _key_bindings() -> KeyBindings:
    kb = KeyBindings()

    # Not while Ctrl-R searches: there Enter accepts the found statement.
    @kb.add("enter", filter=~is_searching)
    def _enter(event: Any) -> None:
        buf = event.current_buffer
        state = buf.complete_state
        if state is not None and state.current_completion is not None:
            buf.apply_completion(state.current_completion)
            return
        text = buf.document.text
        if not text.strip():
            buf.reset()  # an empty line: a fresh prompt, nothing to run
            event.app.exit(result="")
            return
        # Like the Flink client: a complete buffer runs wherever the cursor is (a statement
        # recalled by Ctrl-R leaves the cursor on the match); Alt-Enter inserts a newline.
        if is_submittable(text):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    @kb.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    return kb


class Shell:
    """One interactive session. `input`/`output` default to the terminal; tests pass a
    pipe input and a DummyOutput, and a StringIO as `out` for what the shell prints."""

    def __init__(
        self,
        env: Any,
        out: TextIO | None = None,
        input: Any = None,
        output: Any = None,
        history_file: str | None = None,
    ) -> None:
        self.env = env
        self.out = out or sys.stdout
        self.input = input
        self.output = output
        self.session = ShellSession(env, self.out, view=self._view)
        self.last_view: Any = None
        path = history_file or history_path(env.get_config())
        self.history = open_history(path, warn=self.out)
        self.prompt = PromptSession[str](
            message=PROMPT,
            multiline=True,
            prompt_continuation=self.continuation,
            lexer=SqlLexer(),
            completer=make_completer(CatalogSource(env)),
            complete_while_typing=False,
            history=self.history,
            key_bindings=_key_bindings(),
            bottom_toolbar=self.toolbar,
            style=Style.from_dict({**STYLE, "bottom-toolbar": "noreverse bg:#303030 #d0d0d0"}),
            refresh_interval=1.0,
            input=input,
            output=output,
        )

    def continuation(self, width: int, line_no: int, wrap_count: int) -> str:
        """The prompt of a statement's second and later lines: `-> `, with the line's number
        before it when `sql-client.display.show-line-numbers` is on (read at each line, so a
        SET takes effect at once)."""
        if SHOW_LINE_NUMBERS.get(self.env.get_config()) and not wrap_count:
            return f"{line_no + 1}".rjust(width - 3) + "-> "
        return " " * (width - 3) + "-> "

    def _view(self, result: Any, mode: str, max_width: int) -> Any:
        def opened(view: Any) -> None:
            self.last_view = view  # for tests and debugging: the view on screen

        max_rows = MAX_TABLE_RESULT_ROWS.get(self.env.get_config())
        return run_result_view(
            result, mode, max_width, input=self.input, output=self.output, on_open=opened, max_rows=max_rows
        )

    def toolbar(self) -> HTML:
        cfg = self.env.get_config()
        mode = RUNTIME_MODE.get(cfg).upper()
        runner = TARGET.get(cfg)
        par = job_parallelism(cfg)
        jobs = self.session.running_jobs()
        rmode = self.session.result_mode()
        return HTML(
            f" <b>{mode}</b> │ runner: {runner} │ parallelism: {par} │ jobs running: {jobs} │ result mode: {rmode}"
            " │ Tab: complete  Ctrl-R: history"
        )

    def run(self) -> int:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("streamsql")
        except PackageNotFoundError:
            v = "dev"
        self.out.write(BANNER.format(version=v))
        self.out.flush()
        while True:
            self.session.report_jobs()
            try:
                text = self.prompt.prompt()
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt: drop the input, never the shell
            except EOFError:
                self.out.write(INFO_QUIT)
                return 0
            if not text.strip():
                continue
            try:
                if not self.session.execute(text):
                    return 0
            except KeyboardInterrupt:
                self.out.write("\n[INFO] Interrupted.\n")


def run(runner: Any) -> int:
    """Open the shell on the terminal over the CLI runner's environment."""
    return Shell(runner.env).run()
