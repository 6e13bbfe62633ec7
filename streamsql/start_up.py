"""Start-up cost of the library entry points (`from streamsql import TableEnvironment`,
`TableEnvironment.create`): the cyclic GC paused while they load the engine.

Why: loading numpy, pyarrow, sqlglot and the planner allocates a few hundred thousand
long-lived objects (modules, classes, functions). With the GC on, Python scans them over
and over while they load (~130 collections, ~10% of a small Table API program's CPU) and
frees nothing. Paused, they are then moved to the oldest generation (`gc.freeze()` then
`gc.unfreeze()`, as documented: "put them back into the oldest generation"), so the young
collections after the load do not scan them either. They stay collectable: the next full
collection sees them, as it sees everything.

The CLI (streamsql/cli.py) goes further: it owns its process, so it also freezes what
start-up built (`gc.freeze`), and ends the process without the interpreter's teardown
(`end_process`). A library must not: freezing would keep the caller's own garbage from ever
being collected, and the program that imported streamsql owns its own exit.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic GC off inside the block, back on after it (left as it was if it was
    already off, e.g. inside the CLI's start-up or an outer block). When the block loaded
    modules, what it allocated goes to the oldest generation. Only then: a later block
    (the next TableEnvironment of a long program) loads nothing, and the caller's young
    garbage is left to the young collections. Nothing is lost: the next full collection
    sees every object. The caller's own frozen objects (`gc.freeze`) stay frozen: with
    any, the objects are left young."""
    if not gc.isenabled():
        yield
        return
    loaded = len(sys.modules)
    gc.disable()
    try:
        yield
    finally:
        if len(sys.modules) > loaded and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def limit_blas_threads() -> None:
    """One OpenBLAS thread, for the `streamsql` command (a process it owns), unless the
    user set `OPENBLAS_NUM_THREADS`.

    Why: numpy's OpenBLAS starts a thread per core when numpy loads, and they spin before
    they sleep: ~0.1 s of CPU on every start, taken from the job's own threads on a busy
    machine. streamsql's operators never call BLAS (Arrow kernels and numpy's element-wise
    code), and a job's parallelism comes from its own subtasks, so more BLAS threads would
    only compete with them (Ray and PySpark limit their workers' BLAS threads likewise).
    Only before numpy is loaded (OpenBLAS reads the variable once), and never in the
    library: it would change the BLAS threading of the program that imports streamsql.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def end_process(code: int) -> NoReturn:
    """End the `streamsql` command's process with exit status `code`, skipping the
    interpreter's teardown when nothing observable depends on it.

    Why: after the command's work, a normal exit frees every module's objects one by one
    (numpy's, pyarrow's, sqlglot's, ours), ~40 ms of `streamsql -e "SELECT 1"`'s ~0.35 s,
    to hand memory back to an OS that takes it all back anyway. What the teardown does that
    a user can observe is done here first, in the interpreter's order: the `atexit`
    callbacks run (logging's final flush, `weakref.finalize` clean-ups such as temporary
    and spill directories, multiprocessing's joining of child processes), then stdout and
    stderr are flushed, and so are files the program opened and never closed (a user
    function's log file: the teardown would have closed them). Then `os._exit`, as
    multiprocessing's forked children end. The
    `__del__` methods of objects still alive then do not run; Python does not promise them
    at exit either (its data model says so), so a clean-up that must happen is an `atexit`
    callback or a `weakref.finalize` (runtime/spill.py's spill directories are).

    When that would not be the same as a normal exit, it is a normal exit (`sys.exit`):
    another Python thread is alive (the interpreter waits for non-daemon threads and runs
    their pools' shut-down hooks, which only it can do), or flushing a standard stream
    fails (a closed pipe: the interpreter reports it and exits with status 120).
    """
    if threading.active_count() == 1:
        run_exit_callbacks = getattr(atexit, "_run_exitfuncs", None)
        if run_exit_callbacks is not None:
            run_exit_callbacks()  # (clears them: a fallback `sys.exit` will not run them twice)
            if threading.active_count() == 1:
                _flush_unclosed_files()
                try:
                    for stream in (sys.stdout, sys.stderr):
                        if stream is not None:
                            stream.flush()
                except (OSError, ValueError):
                    pass
                else:
                    os._exit(code)
    sys.exit(code)


_BUFFERED_FILES = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def _flush_unclosed_files() -> None:
    """Flush the buffered files still open, as their collection during the teardown would.
    Only the objects allocated since start-up are looked at (`gc.freeze` put start-up's in
    the permanent generation, which `gc.get_objects` leaves out): a few thousand objects
    after a short job, against the teardown's freeing of every object."""
    for obj in gc.get_objects():
        if isinstance(obj, _BUFFERED_FILES) and not obj.closed:
            try:
                obj.flush()
            except (OSError, ValueError):
                pass  # (the teardown would have ignored it too)
