"""Third-party connectors: packages register a ConnectorFactory under the
`streamsql.connectors` entry point group, e.g. in their pyproject.toml:

    [project.entry-points."streamsql.connectors"]
    kafka = "my_package.kafka:FACTORY"

The entry point may name a ConnectorFactory or a zero-argument callable returning one.
"""

from __future__ import annotations

from importlib.metadata import entry_points

from runtime.connectors.base import ConnectorFactory, register_connector

GROUP = "streamsql.connectors"
_loaded = False


def load_connector_plugins() -> list[str]:
    """Register every installed plugin connector once; returns the names registered."""
    global _loaded
    if _loaded:
        return []
    _loaded = True
    names = []
    for ep in entry_points(group=GROUP):
        obj = ep.load()
        factory = obj if isinstance(obj, ConnectorFactory) else obj()
        if not isinstance(factory, ConnectorFactory):
            raise TypeError(f"entry point {ep.name!r} in {GROUP} is not a ConnectorFactory")
        register_connector(factory)
        names.append(factory.name)
    return names


CATALOG_GROUP = "streamsql.catalogs"


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
    for ep in entry_points(group=CATALOG_GROUP):
        obj = ep.load()
        factory = obj if isinstance(obj, CatalogFactory) else obj()
        if not isinstance(factory, CatalogFactory):
            raise TypeError(f"entry point {ep.name!r} in {CATALOG_GROUP} is not a CatalogFactory")
        register_catalog_type(factory)
        names.append(factory.name)
    return names
