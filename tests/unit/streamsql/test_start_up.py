"""streamsql/start_up.py: the GC pause of the library entry points leaves the collector as
it found it, promotes only what a block that loaded modules allocated, and never thaws
objects the caller froze."""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterator

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
