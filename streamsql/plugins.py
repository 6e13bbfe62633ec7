"""Third-party connectors: packages register a ConnectorFactory under the
`streamsql.connectors` entry point group, e.g. in their pyproject.toml:

    [project.entry-points."streamsql.connectors"]
    kafka = "my_package.kafka:FACTORY"

The entry point may name a ConnectorFactory or a zero-argument callable returning one.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from importlib.metadata import EntryPoint, entry_points

from runtime.connectors.base import ConnectorFactory, register_connector

GROUP = "streamsql.connectors"
_loaded = False


CATALOG_GROUP = "streamsql.catalogs"


@cache
def _installed() -> dict[str, tuple[EntryPoint, ...]]:
    """The entry points of both groups, read once: reading scans the metadata of every
    installed distribution (~10 ms with a hundred), so the two groups share one scan."""
    found = entry_points()
    return {group: tuple(found.select(group=group)) for group in (GROUP, CATALOG_GROUP)}


def _group(group: str) -> Iterable[EntryPoint]:
    return _installed()[group]


def load_connector_plugins() -> list[str]:
    """Register every installed plugin connector once; returns the names registered."""
    global _loaded
    if _loaded:
        return []
    _loaded = True
    names = []
    for ep in _group(GROUP):
        obj = ep.load()
        factory = obj if isinstance(obj, ConnectorFactory) else obj()
        if not isinstance(factory, ConnectorFactory):
            raise TypeError(f"entry point {ep.name!r} in {GROUP} is not a ConnectorFactory")
        register_connector(factory)
        names.append(factory.name)
    return names


_catalogs_loaded = False


def load_catalog_plugins() -> list[str]:
    """Catalog types of installed packages: a planner.catalog_store.CatalogFactory (or a
    zero-argument callable returning one) under the `streamsql.catalogs` group."""
    from planner.catalog_store import CatalogFactory, register_catalog_type

    global _catalogs_loaded
    if _catalogs_loaded:
        return []
    _catalogs_loaded = True
    names = []
    for ep in _group(CATALOG_GROUP):
        obj = ep.load()
        factory = obj if isinstance(obj, CatalogFactory) else obj()
        if not isinstance(factory, CatalogFactory):
            raise TypeError(f"entry point {ep.name!r} in {CATALOG_GROUP} is not a CatalogFactory")
        register_catalog_type(factory)
        names.append(factory.name)
    return names
