"""The JobGraph: the only thing that crosses from planner to runtime.

Plain data: every node names its operator, its inputs, its output schema, its changelog
mode and its parameters: the typed, frozen params dataclass of its kind
(runtime/operators/spec.py), serialized field by field; `Expr`, `DataType` and `Field`
values inside are tagged, so a saved graph can be run, inspected and diffed on its own.
The JSON carries `format_version`; `from_json` refuses any other version.
"""

from __future__ import annotations

import json
from dataclasses import field
from typing import Any

from runtime.frozen import frozen_dataclass
from runtime.operators.spec import GRAPH_FORMAT_VERSION, OperatorSpec, decode_untyped, encode_value, spec_for
from runtime.types import Field

STREAMING = "STREAMING"
BATCH = "BATCH"


@frozen_dataclass
class Node:
    """One operator of the job. `id`s are unique and inputs refer to earlier ids."""

    id: int
    operator: str
    inputs: tuple[int, ...]
    schema: tuple[Field, ...]
    # The kind's typed params (an `OperatorParams` dataclass); a plain dict for a kind that
    # declares no spec yet.
    params: Any = field(default_factory=dict, hash=False, compare=False)
    # Changelog mode of the output edge: "I" (insert-only), "I,UB,UA" / "I,UB,UA,D"
    # (retract) or "I,UA,D" (upsert), as Flink's EXPLAIN CHANGELOG_MODE prints them.
    changelog_mode: str = "I"
    parallelism: int = 1
    # A short human label (EXPLAIN-style) for logs, metrics and the dashboard.
    label: str = ""

    def is_kind(self, spec: OperatorSpec[Any]) -> bool:
        """This node is of kind `spec`."""
        return self.operator == spec.name


@frozen_dataclass
class JobGraph:
    """The planner's output and the runtime's input: the operator DAG, the mode and the
    job's configuration (the only thing that crosses from planner to runtime)."""

    nodes: tuple[Node, ...]
    mode: str = STREAMING
    config: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    # Id of the node whose output goes back to the caller (a query's result), if any.
    result_node: int | None = None
    name: str = "job"

    def node(self, node_id: int) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def consumers(self, node_id: int) -> list[Node]:
        return [n for n in self.nodes if node_id in n.inputs]

    def to_json(self) -> str:
        return json.dumps(
            {
                "format_version": GRAPH_FORMAT_VERSION,
                "name": self.name,
                "mode": self.mode,
                "config": self.config,
                "result_node": self.result_node,
                "nodes": [
                    {
                        "id": n.id,
                        "operator": n.operator,
                        "inputs": list(n.inputs),
                        "schema": [f.to_json() for f in n.schema],
                        "params": encode_value(n.params),
                        "changelog_mode": n.changelog_mode,
                        "parallelism": n.parallelism,
                        "label": n.label,
                    }
                    for n in self.nodes
                ],
            },
            indent=1,
            sort_keys=True,
        )

    @staticmethod
    def from_json(text: str) -> JobGraph:
        """The graph `to_json` wrote. Raises GraphFormatError for another format version or
        params that do not fit their operator's params class."""
        d = json.loads(text)
        version = d.get("format_version") if isinstance(d, dict) else None
        if version != GRAPH_FORMAT_VERSION:
            found = "no format_version" if version is None else f"format_version {version!r}"
            raise GraphFormatError(
                f"Cannot read this JobGraph: it has {found}, this streamsql reads format_version "
                f"{GRAPH_FORMAT_VERSION}. Plan the query again with this version (EXPLAIN / compile) to get a "
                "graph it can run."
            )
        return JobGraph(
            nodes=tuple(
                Node(
                    id=n["id"],
                    operator=n["operator"],
                    inputs=tuple(n["inputs"]),
                    schema=tuple(Field.from_json(f) for f in n["schema"]),
                    params=_decode_params(n["operator"], n["params"]),
                    changelog_mode=n["changelog_mode"],
                    parallelism=n["parallelism"],
                    label=n.get("label", ""),
                )
                for n in d["nodes"]
            ),
            mode=d["mode"],
            config=d["config"],
            result_node=d["result_node"],
            name=d.get("name", "job"),
        )


class GraphFormatError(ValueError):
    """A saved JobGraph this version cannot read (another format version, bad params)."""


def _decode_params(operator: str, data: Any) -> Any:
    spec = spec_for(operator)
    if spec is None:
        return decode_untyped(data)
    try:
        return spec.decode_params(data)
    except (TypeError, ValueError) as e:
        raise GraphFormatError(f"Cannot read the params of operator {operator}: {e}") from None
