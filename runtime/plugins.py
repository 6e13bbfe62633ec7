"""Load a package's self-registering modules on first use.

Connectors, formats, scalar functions, operators and planner rules each live one
module per family and register themselves on import. The registries import those
modules lazily (on the first look-up), both to keep `import runtime` cheap and to
avoid import cycles: a family module imports its registry module, so the registry
cannot import the family at its own import time.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Collection

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
