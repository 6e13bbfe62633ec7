"""The self-describing `_metadata` of a checkpoint or savepoint (JSON).

It names every operator by its stable uid (runtime.checkpoint.uid), with the operator
kind, label, state file, size, key count and state names, the executor's watermark
bookkeeping for it, and the job graph itself, so `streamsql savepoint inspect` and a
restore after a SQL change can explain what maps where without loading any state.

Integrity (docs/state-format.md): every state file's SHA-256 is recorded next to it
(`checksum`), and the document carries the SHA-256 of its own canonical JSON
(`metadata_checksum`), so a flipped byte anywhere in a snapshot is detected before any
state is restored (`runtime.checkpoint.restore`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, field
from typing import Any

from runtime.checkpoint.format import digest
from runtime.frozen import mutable_dataclass

FORMAT = "streamsql-snapshot"
# 2: state files in runtime/checkpoint/format.py, checksums; 1 (pickled state) is refused.
VERSION = 2


@mutable_dataclass
class SubtaskState:
    """One parallel subtask's share of an operator's state (parallelism > 1)."""

    index: int
    key_group_range: list[int]  # [first, last] key group this subtask owned (inclusive)
    file: str | None  # state file inside the snapshot directory (None: no state)
    bytes: int = 0
    keys: int | None = None
    checksum: str = ""  # "sha256:<hex>" of `file` (runtime.checkpoint.format.digest)


@mutable_dataclass
class OperatorState:
    """One operator's entry in a snapshot's `_metadata`: which file holds its state, and its digest."""

    uid: str
    node_id: int
    operator: str
    label: str
    file: str | None  # state file name inside the snapshot directory (None: no state)
    bytes: int = 0
    keys: int | None = None
    state_names: list[str] = field(default_factory=list)
    fingerprint: str = ""  # input/output schemas: a restore into another shape is refused
    executor: dict[str, Any] = field(default_factory=dict)
    # Parallelism > 1: one entry per subtask (then `file` is None and `bytes`/`keys` are
    # the totals). Empty for a single subtask, whose state is `file`.
    subtasks: list[SubtaskState] = field(default_factory=list)
    # Incremental rocksdb checkpoint: the shared SST files (relative to the job directory)
    # this state needs; `bytes` is then what this checkpoint uploaded.
    shared_files: list[str] = field(default_factory=list)
    checksum: str = ""  # "sha256:<hex>" of `file` (runtime.checkpoint.format.digest)


@mutable_dataclass
class CheckpointMetadata:
    """A snapshot's `_metadata`: what restoring needs to find and verify every state file."""

    checkpoint_id: int
    kind: str  # "checkpoint" | "savepoint"
    job_id: str
    timestamp_ms: int
    state_backend: str
    max_parallelism: int
    parallelism: int
    operators: list[OperatorState]
    graph: dict[str, Any] | None = None
    duration_ms: int = 0

    def to_json(self) -> bytes:
        d = asdict(self)
        d = {"format": FORMAT, "version": VERSION, **d}
        d["metadata_checksum"] = _self_digest(d)
        return json.dumps(d, indent=1, sort_keys=False).encode("utf-8")

    @staticmethod
    def from_json(data: bytes) -> CheckpointMetadata:
        """Parse and check a `_metadata` document: `ValueError` saying why it is not one
        this streamsql can restore (not JSON, another format or version, a checksum that
        does not match its content)."""
        try:
            d = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"_metadata is not valid JSON ({e})") from None
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise ValueError("not a streamsql checkpoint or savepoint (_metadata has no 'format' marker)")
        version = d.get("version")
        if version != VERSION:
            if isinstance(version, int) and version > VERSION:
                raise ValueError(f"snapshot format version {version} is newer than this streamsql's ({VERSION})")
            raise ValueError(
                f"snapshot format version {version} was written by an older streamsql with pickled state, "
                f"which is never read (reading a pickle can run arbitrary code); this streamsql reads version {VERSION}"
            )
        recorded = d.pop("metadata_checksum", None)
        if recorded != _self_digest(d):
            raise ValueError("_metadata checksum does not match its content (the file was changed or damaged)")
        ops = []
        for o in d.pop("operators"):
            subtasks = [SubtaskState(**st) for st in o.pop("subtasks", [])]
            ops.append(OperatorState(**o, subtasks=subtasks))
        d.pop("format", None)
        d.pop("version", None)
        return CheckpointMetadata(operators=ops, **d)

    def operator(self, uid: str) -> OperatorState | None:
        for o in self.operators:
            if o.uid == uid:
                return o
        return None

    @property
    def total_bytes(self) -> int:
        return sum(o.bytes for o in self.operators)


def _self_digest(d: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a `_metadata` document without its own checksum."""
    body = {k: v for k, v in d.items() if k != "metadata_checksum"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return digest(text.encode("ascii"))
