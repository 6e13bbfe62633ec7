"""streamsql/start_up.py: the GC pause of the library entry points leaves the collector as
it found it, promotes only what a block that loaded modules allocated, and never thaws
objects the caller froze."""

from __future__ import annotations

import gc
import re
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamsql.start_up import gc_paused


@pytest.fixture
def gc_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def _load_a_module(name: str) -> None:
    sys.modules[name] = types.ModuleType(name)


def test_the_gc_is_off_inside_and_on_after(gc_on: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_gc_is_on_again_after_an_error(gc_on: None) -> None:
    with pytest.raises(ZeroDivisionError), gc_paused():
        _ = 1 / 0
    assert gc.isenabled()


def test_a_disabled_gc_stays_disabled() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_a_block_that_loads_modules_moves_its_objects_to_the_oldest_generation(gc_on: None) -> None:
    name = "streamsql_test_start_up_loaded"
    try:
        with gc_paused():
            _load_a_module(name)
            young = [[] for _ in range(2000)]
        assert gc.get_count()[0] < 2000  # not waiting in the youngest generation
        assert any(o is young for o in gc.get_objects(generation=2))
    finally:
        sys.modules.pop(name, None)


def test_a_block_that_loads_nothing_leaves_its_objects_young(gc_on: None) -> None:
    gc.collect()
    with gc_paused():
        young = [[] for _ in range(200)]
    assert any(o is young for o in gc.get_objects(generation=0))


def test_the_callers_frozen_objects_stay_frozen(gc_on: None) -> None:
    # A frozen object is in no generation (`gc.get_objects()` lists generations 0-2 only).
    # The freeze count itself is no witness: a frozen object freed by its reference count
    # leaves the permanent generation, so the count can drop while the block runs.
    name = "streamsql_test_start_up_frozen"
    mine = [[]]
    gc.freeze()
    try:
        with gc_paused():
            _load_a_module(name)
        assert not any(o is mine for o in gc.get_objects())
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        sys.modules.pop(name, None)


# `end_process` (the `streamsql` command's exit) must be observably the same as `sys.exit`:
# each program below ends once with `sys.exit(3)` and once with `end_process(3)`, in a fresh
# interpreter, and both runs must give the same exit status, stdout and stderr.
_EXIT_PROGRAMS = {
    "buffered output larger than a pipe's buffer": """
        sys.stdout.write("x" * 300_000 + "\\n")
    """,
    "atexit callbacks run after the output, in reverse order": """
        atexit.register(print, "first registered")
        atexit.register(print, "last registered")
        print("body")
    """,
    "an atexit callback that fails is reported and the others still run": """
        atexit.register(print, "still runs")
        atexit.register(lambda: 1 / 0)
    """,
    "weakref.finalize clean-ups run": """
        class Spill:
            pass
        keep = Spill()
        weakref.finalize(keep, print, "directory removed")
    """,
    "a non-daemon thread is waited for": """
        def late() -> None:
            time.sleep(0.2)
            print("thread finished")
        threading.Thread(target=late).start()
    """,
    "a thread pool's workers are shut down": """
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(2)
        print(pool.submit(lambda: 21 * 2).result())
    """,
    "stderr is flushed too": """
        sys.stderr.write("no newline")
    """,
}


@pytest.mark.parametrize("body", list(_EXIT_PROGRAMS.values()), ids=list(_EXIT_PROGRAMS))
def test_end_process_exits_as_sys_exit_would(body: str) -> None:
    import subprocess
    import textwrap

    runs = []
    for ending in ("sys.exit(3)", "end_process(3)"):
        program = (
            "import atexit, sys, threading, time, weakref\n"
            "from streamsql.start_up import end_process\n" + textwrap.dedent(body) + ending + "\n"
        )
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
        runs.append((run.returncode, run.stdout, re.sub(r"0x[0-9a-f]+", "0x", run.stderr)))
    assert runs[0][0] == 3, runs[0]
    assert runs[1] == runs[0]


def test_end_process_with_a_closed_stdout_exits_as_sys_exit_would() -> None:
    # the reader of stdout is gone: the interpreter reports the failed flush and exits 120
    import subprocess

    runs = []
    for ending in ("sys.exit(0)", "end_process(0)"):
        program = (
            "import sys\nfrom streamsql.start_up import end_process\n"
            "sys.stdout.write('x' * 100)\n"  # (buffered: flushed only at exit)
            "sys.stdout.flush = lambda: (_ for _ in ()).throw(BrokenPipeError(32, 'Broken pipe'))\n" + ending + "\n"
        )
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
        runs.append(run.returncode)
    assert runs[0] == 120, runs
    assert runs[1] == runs[0]


def test_end_process_flushes_a_file_never_closed(tmp_path: Path) -> None:
    # a user function's log file, opened and written but never closed: the teardown would
    # have flushed it when collecting it
    import subprocess

    for ending in ("sys.exit(0)", "end_process(0)"):
        path = tmp_path / f"{ending[:3]}.log"
        program = (
            "import sys\nfrom streamsql.start_up import end_process\n"
            f"log = open({str(path)!r}, 'w')\nlog.write('kept')\n" + ending + "\n"
        )
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert path.read_text() == "kept", ending
