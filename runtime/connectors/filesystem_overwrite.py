"""INSERT OVERWRITE into a filesystem table and its partitions (SHOW PARTITIONS) (Flink's SupportsOverwrite of the filesystem
sink, BATCH mode only).

The job writes its part files as an INSERT INTO does; once it has finished successfully the
files it replaces are removed, as Flink's FileSystemCommitter does when it commits an
overwrite:

- a table without partitions: every file that was there before the job;
- `PARTITION (k = 'v', ...)` naming the partition columns (a leading run of them): every
  file under that partition's directory, even when the query produced no row;
- dynamic partitions: the earlier files of each partition directory the job wrote into
  (partitions the job did not write keep their files).

A failed or cancelled job removes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from runtime.connectors.filesystem_partitions import escape_path_name, partition_keys, partition_values
from runtime.connectors.filesystem_paths import list_files, resolve_path


def prepare_overwrite(options: dict[str, str], static: dict[str, str]) -> Callable[[], None]:
    """Snapshot the files the overwrite may replace; the returned function removes them."""

    root = resolve_path(options.get("path"))
    keys = partition_keys(options)
    fixed: list[str] = []
    for k in keys:
        if k not in static:
            break
        fixed.append(f"{escape_path_name(k)}={escape_path_name(static[k])}")
    scope = os.path.join(root, *fixed)
    before = set(list_files(scope)) if os.path.isdir(scope) else set()
    dynamic = len(fixed) < len(keys)

    def finish() -> None:
        old = before
        if dynamic:
            after = set(list_files(scope)) if os.path.isdir(scope) else set()
            written = {os.path.dirname(f) for f in after - before}
            old = {f for f in before if os.path.dirname(f) in written}
        for path in sorted(old):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    return finish


def list_partitions(options: dict[str, str], keys: tuple[str, ...]) -> list[dict[str, str]]:
    """The partitions of a filesystem table: the `k=v/...` directories holding data files."""

    root = resolve_path(options.get("path"))
    found: dict[tuple[str, ...], dict[str, str]] = {}
    for path in list_files(root) if os.path.isdir(root) else []:
        values = partition_values(root, path)
        if all(k in values for k in keys):
            found[tuple(values[k] for k in keys)] = {k: values[k] for k in keys}
    return [found[k] for k in sorted(found)]
