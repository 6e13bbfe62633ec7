"""A minimal interactive prompt: reads statements until `;` and runs them in the session.

The full prompt-toolkit shell (completion, highlighting, live table view) is issue 8;
this keeps `streamsql` usable on a terminal meanwhile, with the same error handling.
"""

from __future__ import annotations

from typing import Any


def run_shell(runner: Any) -> int:
    from planner.parse import is_complete

    print("streamsql shell: end statements with ';', QUIT; or Ctrl-D to leave.")
    buffer = ""
    while True:
        try:
            line = input("streamsql> " if not buffer else "        -> ")
        except EOFError:
            print()
            return 0
        except KeyboardInterrupt:
            print()
            buffer = ""
            continue
        buffer += line + "\n"
        if not is_complete(buffer):
            continue
        text, buffer = buffer, ""
        if text.strip().rstrip(";").strip().upper() in ("QUIT", "EXIT"):
            return 0
        runner.run_script(text, "<shell>")
