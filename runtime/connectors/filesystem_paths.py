"""Where a 'filesystem' table's files are: its resolved `path` and the files under it,
shared by the source (runtime.connectors.filesystem), the sink (filesystem_sink), INSERT
OVERWRITE (filesystem_overwrite) and the filesystem lookup source.
"""

from __future__ import annotations

import os

from runtime.errors import ConnectorError


def resolve_path(path: str | None) -> str:
    """The directory or file of a table's `path` option (`file://` URLs too), absolute."""
    if not path:
        raise ConnectorError("Missing required option 'path' for connector 'filesystem'.")
    if path.startswith("file://"):
        path = path[len("file://") :]
    return os.path.abspath(os.path.expanduser(path))


def _visible(name: str) -> bool:
    return not (name.startswith(".") or name.startswith("_"))


def list_files(root: str) -> list[str]:
    """Files under `root` in name order (recursively), without hidden/'_' entries."""
    if os.path.isfile(root):
        return [root]
    out: list[str] = []

    def unreadable(e: OSError) -> None:
        # a directory that cannot be listed is an error, not an empty table (a missing root
        # is no error: a monitored directory may appear later)
        if isinstance(e, FileNotFoundError) and os.path.abspath(e.filename or "") == os.path.abspath(root):
            return
        raise ConnectorError(f"Cannot list directory '{e.filename}' of the filesystem table: {e.strerror or e}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        dirnames[:] = sorted(d for d in dirnames if _visible(d))
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if _visible(f))
    return sorted(out)
