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
start-up built (`gc.freeze`). A library must not: freezing would keep the caller's own
garbage from ever being collected.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
