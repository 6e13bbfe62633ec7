"""The catalog store (Flink's `table.catalog-store.*`, FLIP-295): where the catalogs that
CREATE CATALOG makes are kept, so that a later session finds them again.

`generic_in_memory` (the default) keeps them for the session only. `file` writes each
catalog's options to `<path>/<catalog name>.yaml` as Flink's FileCatalogStore does (a flat
YAML map of the CREATE CATALOG options, `type` among them), removes the file on DROP
CATALOG, rewrites it on ALTER CATALOG, and registers every catalog of the directory when a
TableEnvironment starts. Flink reads the store's options when the session starts (from the
environment's configuration, `-D` or the configuration file), not from a later SET; so
does streamsql. The store keeps a catalog's options only: what a `generic_in_memory`
catalog holds is gone with the session, as in Flink.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

from planner.catalog_store import CatalogError, create_catalog_store
from runtime.config.options import ConfigSource, key
from runtime.errors import ConfigError

if TYPE_CHECKING:
    from planner.catalog import Catalog

CATALOG_STORE_KIND = (
    key("table.catalog-store.kind")
    .string_type()
    .default_value("generic_in_memory")
    .with_description(
        "Where CREATE CATALOG's catalogs are kept: `generic_in_memory` (for the session) or `file` "
        "(one `<catalog>.yaml` of its options per catalog under `table.catalog-store.file.path`, "
        "registered again by the next session). Read when the TableEnvironment starts."
    )
)

CATALOG_STORE_FILE_PATH = (
    key("table.catalog-store.file.path")
    .string_type()
    .no_default_value()
    .with_description(
        "The directory of the `file` catalog store (it must exist). Read when the TableEnvironment starts."
    )
)

KINDS = ("generic_in_memory", "file")
_EXTENSION = ".yaml"
_PLAIN = r"[A-Za-z_][A-Za-z0-9._-]*"  # a key Flink's YAML mapper writes unquoted


def store_directory(conf: ConfigSource | None) -> str | None:
    """The `file` store's directory, or None for the in-memory store. An unknown kind, a
    missing path or a path that is not a directory is a ConfigError (the session does not
    start; Flink's messages: no CatalogStoreFactory for the kind, the directory does not
    exist or is not a directory)."""
    kind = CATALOG_STORE_KIND.get(conf)
    if kind not in KINDS:
        raise ConfigError(
            CATALOG_STORE_KIND.key,
            kind,
            "no CatalogStoreFactory has this identifier; available factory identifiers are "
            + " and ".join(sorted(KINDS)),
        )
    if kind != "file":
        return None
    path = CATALOG_STORE_FILE_PATH.get(conf)
    if not path:
        raise ConfigError(
            CATALOG_STORE_FILE_PATH.key,
            "",
            "the 'file' catalog store needs the directory it keeps catalogs in (missing required option 'path')",
        )
    path = path.removeprefix("file://")
    if not os.path.isdir(path):
        problem = "does not exist" if not os.path.exists(path) else "is not a directory"
        raise ConfigError(
            CATALOG_STORE_FILE_PATH.key,
            path,
            f"failed to open catalog store: the catalog store directory {path} {problem} (create it first)",
        )
    return path


def _dump(options: dict[str, str]) -> str:
    # A flat YAML map as Flink's YAML mapper writes it: plain keys (quoted when they need it),
    # double-quoted values (a JSON string is a valid YAML one).
    return "".join(f"{k if re.fullmatch(_PLAIN, k) else json.dumps(k)}: {json.dumps(v)}\n" for k, v in options.items())


def _scalar(text: str) -> str:
    text = text.strip()
    if text.startswith('"'):
        return str(json.loads(text))
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    return text


def _load(text: str, file: str) -> dict[str, str]:
    """The flat `key: value` map Flink's store writes (plain, single- or double-quoted)."""
    options: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#") or line.strip() == "---":
            continue
        name, sep, value = line.partition(": ") if not line.startswith('"') else _quoted_key(line)
        if not sep:
            raise CatalogError(
                f"Failed to load catalog configuration from file {file}: line {number} is not `key: value`."
            )
        options[_scalar(name)] = _scalar(value)
    return options


def _quoted_key(line: str) -> tuple[str, str, str]:
    end = line.index('"', 1)
    while line[end - 1] == "\\":
        end = line.index('"', end + 1)
    rest = line[end + 1 :]
    return line[: end + 1], ":" if rest.startswith(":") else "", rest[1:]


def open_store(catalog: Catalog, conf: ConfigSource | None) -> None:
    """Registers the catalogs of a `file` store (nothing for the in-memory one)."""
    directory = store_directory(conf)
    if directory is None:
        return
    for entry in sorted(os.listdir(directory)):
        file = os.path.join(directory, entry)
        if not entry.endswith(_EXTENSION) or os.path.isdir(file):
            continue
        name = entry[: -len(_EXTENSION)]
        if name in catalog.catalogs:
            continue
        with open(file, encoding="utf-8") as f:
            options = _load(f.read(), file)
        catalog.add_catalog(create_catalog_store(name, options))


def store_catalog(conf: ConfigSource | None, name: str, options: dict[str, str], replace: bool = False) -> None:
    """Writes a catalog's options to a `file` store (CREATE CATALOG; ALTER CATALOG replaces)."""
    directory = store_directory(conf)
    if directory is None:
        return
    file = os.path.join(directory, name + _EXTENSION)
    if os.path.exists(file) and not replace:
        raise CatalogError(f"Catalog {name}'s store file {file} is already exist.")
    with open(file, "w", encoding="utf-8") as f:
        f.write(_dump(options))


def remove_catalog(conf: ConfigSource | None, name: str) -> None:
    """Deletes a catalog's file from a `file` store (DROP CATALOG)."""
    directory = store_directory(conf)
    if directory is None:
        return
    file = os.path.join(directory, name + _EXTENSION)
    if os.path.exists(file):
        os.remove(file)
