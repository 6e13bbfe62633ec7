"""Load a package's self-registering modules on first use, and other packages' plugins.

Connectors, formats, scalar functions, operators and planner rules each live one
module per family and register themselves on import. The registries import those
modules lazily (on the first look-up), both to keep `import runtime` cheap and to
avoid import cycles: a family module imports its registry module, so the registry
cannot import the family at its own import time.

Other packages add connectors and catalog types through entry points (`entry_points`):
the connector registry (runtime/connectors/base.py) and the catalog types
(planner/catalog_store.py) read them when a name is not one of their own, so a job that
uses only built-in connectors never scans the installed packages.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Collection, Mapping
from functools import cache
from typing import Any, TypeVar

_imported: set[str] = set()


def import_submodules(package: str, skip: Collection[str] = (), skip_suffix: str | None = None) -> None:
    """Import every public submodule of `package` (not `_private`, not in `skip`, not
    ending with `skip_suffix`), once.

    The package is marked done before its submodules are imported, so a submodule
    that looks the registry up while it is being imported does not start the loading
    again (the same re-entrancy guard the per-registry `_loaded` flags gave).
    """
    if package in _imported:
        return
    _imported.add(package)
    pkg = importlib.import_module(package)
    for mod in pkgutil.iter_modules(pkg.__path__):
        if (
            mod.name not in skip
            and not mod.name.startswith("_")
            and not (skip_suffix and mod.name.endswith(skip_suffix))
        ):
            importlib.import_module(f"{package}.{mod.name}")


F = TypeVar("F")

# The entry point groups streamsql reads (the connector registry's and the catalog types').
PLUGIN_GROUPS = ("streamsql.connectors", "streamsql.catalogs")


@cache
def _installed() -> dict[str, tuple[Any, ...]]:
    """The entry points of every group in `PLUGIN_GROUPS`, read once: reading scans the
    metadata of every installed distribution (~6 ms with 150, and on a wheel install the
    import of importlib.metadata), so the groups share one scan."""
    from importlib.metadata import entry_points

    found = entry_points()
    return {group: tuple(found.select(group=group)) for group in PLUGIN_GROUPS}


def entry_points(group: str) -> list[tuple[str, Any]]:
    """(name, loaded object) of the installed packages' entry points in `group` (one of
    `PLUGIN_GROUPS`), in the order the metadata lists them. Loading imports the module
    an entry point names."""
    return [(ep.name, ep.load()) for ep in _installed()[group]]


_registered_groups: set[str] = set()


def register_plugins(
    group: str,
    factory_type: type[F],
    registered: Mapping[str, F],
    register: Callable[[F], object],
    error: Callable[[str], Exception],
    what: str,
) -> None:
    """Register the factories of `group`'s entry points (each a `factory_type`, or a
    zero-argument callable returning one) with `register`, once per group (marked done
    first, as `import_submodules` is, so an error is not raised again at every look-up). A
    plugin may not take the name of one already `registered` (a built-in: which one a name
    meant would be ambiguous, as Flink refuses two factories with one identifier); that and
    a non-factory raise `error`."""
    if group in _registered_groups:
        return
    _registered_groups.add(group)
    for ep_name, obj in entry_points(group):
        factory = obj if isinstance(obj, factory_type) else obj() if callable(obj) else obj
        if not isinstance(factory, factory_type):
            raise error(
                f"The entry point '{ep_name}' of group '{group}' is not a {factory_type.__name__} "
                f"(nor a callable returning one): {type(factory).__name__}"
            )
        name = factory.name  # type: ignore[attr-defined]
        if name in registered and registered[name] is not factory:
            raise error(
                f"Multiple factories for identifier '{name}': the entry point '{ep_name}' of group "
                f"'{group}' has the name of a built-in {what}. Rename the plugin's {what}."
            )
        register(factory)
