"""Checkpoint storage through `pyarrow.fs`: local paths, `file://` and `s3://` URIs.

Layout (as Flink's): `<dir>/<job-id>/chk-<n>/` holds one state file per operator and
`_metadata`, written last and atomically (a local file is written under a temporary
name and renamed; an S3 object appears whole or not at all). A directory without a
readable `_metadata` is an incomplete checkpoint and is never chosen for recovery.
S3 endpoints and credentials come from Flink's `s3.endpoint`, `s3.access-key`,
`s3.secret-key` (or the AWS environment).
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime.checkpoint.options import S3_ACCESS_KEY, S3_ENDPOINT, S3_REGION, S3_SECRET_KEY

if TYPE_CHECKING:
    import pyarrow.fs as pafs

METADATA = "_metadata"


def _fs() -> Any:
    """pyarrow.fs, imported when a checkpoint is first stored (not at start-up)."""
    import pyarrow.fs

    return pyarrow.fs


def _s3_filesystem(config: dict[str, str]) -> pafs.FileSystem:
    endpoint = S3_ENDPOINT.get(config) or os.environ.get("AWS_ENDPOINT_URL") or ""
    kwargs: dict[str, Any] = {"allow_bucket_creation": True}
    if endpoint:
        scheme = "https" if endpoint.startswith("https://") else "http"
        kwargs["endpoint_override"] = endpoint.split("://", 1)[-1]
        kwargs["scheme"] = scheme
    access_key = S3_ACCESS_KEY.get(config)
    if access_key:
        kwargs["access_key"] = access_key
        kwargs["secret_key"] = S3_SECRET_KEY.get(config) or ""
    kwargs["region"] = S3_REGION.get(config) or os.environ.get("AWS_REGION") or "us-east-1"
    return _fs().S3FileSystem(**kwargs)


class SnapshotCorruptError(ValueError):
    """A snapshot that fails verification (the message says which file and why)."""


class CheckpointStorage:
    """A root directory on some `pyarrow.fs` filesystem, with the few operations
    checkpoints need. Paths given to the methods are relative to the root."""

    def __init__(self, uri: str, config: dict[str, str] | None = None) -> None:
        self.uri = uri
        config = config or {}
        if uri.startswith("s3://"):
            self.fs: pafs.FileSystem = _s3_filesystem(config)
            self.root = uri[len("s3://") :].rstrip("/")
            self.local = False
            bucket = self.root.split("/", 1)[0]
            try:
                self.fs.create_dir(bucket)
            except OSError:
                pass  # exists already, or creation is not allowed: writing will tell
        elif "://" in uri and not uri.startswith("file://"):
            self.fs, self.root = _fs().FileSystem.from_uri(uri)
            self.local = False
        else:
            path = uri[len("file://") :] if uri.startswith("file://") else uri
            self.fs = _fs().LocalFileSystem()
            self.root = os.path.abspath(os.path.expanduser(path))
            self.local = True

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def display(self, rel: str) -> str:
        """A URI a user can pass back (`--restore`, `execution.savepoint.path`)."""
        if self.local:
            return self.path(rel)
        return self.uri.rstrip("/") + "/" + rel

    # ------------------------------------------------------------------ files
    def write(self, rel: str, data: bytes) -> None:
        full = self.path(rel)
        parent = full.rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        with self.fs.open_output_stream(full) as f:
            f.write(data)

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Write so that readers see the whole file or nothing."""
        if not self.local:
            self.write(rel, data)  # object stores create objects atomically
            return
        full = self.path(rel)
        tmp = f"{full}.{uuid.uuid4().hex}.tmp"
        self.write(tmp[len(self.root) + 1 :], data)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, full)

    def upload_file(self, local: str, rel: str) -> None:
        """Copy a local file to `rel` (streamed: SST files can be large)."""
        import shutil

        full = self.path(rel)
        self.fs.create_dir(full.rsplit("/", 1)[0], recursive=True)
        with open(local, "rb") as src, self.fs.open_output_stream(full) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)  # type: ignore[misc]

    def read(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.path(rel)) as f:
            return f.read()

    def read_writable(self, rel: str) -> memoryview:
        """The file's bytes in a writable buffer of their own (state files: their arrays
        are read in place, runtime/checkpoint/format.py `decode`). The buffer is a numpy
        byte array: unlike a bytearray it is not zero-filled first."""
        with self.fs.open_input_file(self.path(rel)) as f:
            size = f.size()
            view = memoryview(np.empty(size, dtype=np.uint8))  # type: ignore[arg-type]
            got = 0
            while got < size:
                n = f.readinto(view[got:])
                if not n:
                    raise OSError(f"{self.path(rel)} ended after {got} of {size} bytes")
                got += n
            return view

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.path(rel)).type != _fs().FileType.NotFound

    def size(self, rel: str) -> int:
        return int(self.fs.get_file_info(self.path(rel)).size or 0)

    def list_dirs(self, rel: str) -> list[str]:
        """Names of the directories directly under `rel` ([] when it does not exist)."""
        sel = _fs().FileSelector(self.path(rel), allow_not_found=True, recursive=False)
        return sorted(i.base_name for i in self.fs.get_file_info(sel) if i.type == _fs().FileType.Directory)

    def list_files(self, rel: str) -> list[tuple[str, int]]:
        sel = _fs().FileSelector(self.path(rel), allow_not_found=True, recursive=False)
        return sorted(
            (i.base_name, int(i.size or 0)) for i in self.fs.get_file_info(sel) if i.type == _fs().FileType.File
        )

    def delete_dir(self, rel: str) -> None:
        try:
            self.fs.delete_dir(self.path(rel))
        except (FileNotFoundError, OSError):
            pass
