"""The JSON documents of the REST API, shaped like Flink's (field names, units: ms since
the epoch for timestamps, ms for durations) so that scripts written for Flink's REST API
keep working. streamsql-specific fields are documented in openapi.json.
"""

from __future__ import annotations

import time
from typing import Any

from runtime.config.core import MAX_PARALLELISM
from streamsql.rest.monitor import JobMonitor

FLINK_VERSION = "2.3-streamsql"
MIN_WATERMARK = -(2**63)

# Flink job states from JobHandle statuses.
_STATES = {"RUNNING": "RUNNING", "FINISHED": "FINISHED", "CANCELED": "CANCELED", "FAILED": "FAILED"}

# Metric ids of /jobs/:id/vertices/:vid/metrics (Flink's names; numBatches* are ours).
VERTEX_METRICS = (
    "numRecordsIn",
    "numRecordsOut",
    "numRecordsInPerSecond",
    "numRecordsOutPerSecond",
    "numBatchesIn",
    "numBatchesOut",
    "busyTimeMsPerSecond",
    "backPressuredTimeMsPerSecond",
    "idleTimeMsPerSecond",
    "currentInputWatermark",
    "currentOutputWatermark",
    "numLateRecordsDropped",
    "numRecordsSkipped",
    "stateSizeKeys",
)


def job_state(handle: Any) -> str:
    return _STATES.get(str(handle.get_job_status()), "RUNNING")


def _ms(t: float | None) -> int:
    return -1 if t is None else int(t * 1000)


def _duration(handle: Any) -> int:
    end = handle.end_time or time.time()
    return int((end - handle.start_time) * 1000)


def job_summary(handle: Any) -> dict[str, Any]:
    """One entry of `/jobs/overview`."""
    mon_nodes = _graph(handle)
    n = len(mon_nodes.nodes) if mon_nodes is not None else 0
    state = job_state(handle)
    tasks = {k: 0 for k in ("total", "created", "scheduled", "deploying", "running", "finished", "canceling")}
    tasks.update({"canceled": 0, "reconciling": 0, "failed": 0, "initializing": 0, "pending": 0})
    tasks["total"] = n
    tasks[{"RUNNING": "running", "FINISHED": "finished", "CANCELED": "canceled", "FAILED": "failed"}[state]] = n
    return {
        "jid": handle.job_id,
        "name": handle.name,
        "state": state,
        "start-time": _ms(handle.start_time),
        "end-time": _ms(handle.end_time),
        "duration": _duration(handle),
        "last-modification": _ms(handle.end_time or handle.start_time),
        "tasks": tasks,
    }


def overview(handles: list[Any]) -> dict[str, Any]:
    """`/overview`: the cluster overview (one local 'task manager')."""
    states = [job_state(h) for h in handles]
    running = states.count("RUNNING")
    return {
        "taskmanagers": 1,
        "slots-total": 1,
        "slots-available": 0 if running else 1,
        "jobs-running": running,
        "jobs-finished": states.count("FINISHED"),
        "jobs-cancelled": states.count("CANCELED"),
        "jobs-failed": states.count("FAILED"),
        "flink-version": FLINK_VERSION,
        "flink-commit": "streamsql",
    }


def _graph(handle: Any) -> Any:
    ex = handle._executor() if callable(getattr(handle, "_executor", None)) else None
    return getattr(ex, "graph", None)


def vertex_id(ex: Any, nid: int) -> str:
    """A node's vertex id: its operator uid (stable across runs, as in savepoints)."""
    uids = getattr(ex, "uids", None) or {}
    return str(uids.get(nid, nid))


def node_by_vertex(ex: Any, vid: str) -> Any:
    for node in ex.graph.nodes:
        if vertex_id(ex, node.id) == vid or str(node.id) == vid:
            return node
    return None


def _wm(v: int | None) -> int:
    return MIN_WATERMARK if v is None else int(v)


def vertex_metrics(mon: JobMonitor, nid: int, with_state: bool = True) -> dict[str, float | int]:
    """All VERTEX_METRICS of node `nid` as numbers."""
    ex = mon.executor
    m = ex.metrics.get(nid)
    node = ex.graph.node(nid)
    st = mon.node_stats(nid)
    rate_in, rate_out, measured_busy = st.rates()
    # Busy: the executor's measured busy time when it keeps one, else the stack samples.
    has_measured = m is not None and "busy_ns" in m.extra
    busy = measured_busy if has_measured else st.ratio(st.busy) * 1000
    bp = st.ratio(st.backpressured) * 1000
    runner = getattr(ex, "task", None)  # the local executor's task runner (None: other executors)
    input_wms = list(runner.input_wm.get(nid, [])) if runner is not None else []
    in_wm = min(input_wms) if input_wms else MIN_WATERMARK
    out_wm = _wm(runner.node_wm.get(nid) if runner is not None else None)
    if not node.inputs:  # a source: its output watermark is its own
        in_wm = out_wm
    # Every batch a node emits is handed to each consumer: a single-input consumer's
    # batches_in equals this node's batches out.
    consumers = [c for c in ex.graph.nodes if nid in c.inputs and len(c.inputs) == 1]
    consumer = ex.metrics.get(consumers[0].id) if consumers else None
    batches_out = consumer.batches_in if consumer is not None else -1
    keys = 0
    if with_state:
        try:
            op = ex.operators.get(nid)
            keys = int(op.state_size().get("keys", 0)) if op is not None else 0
        except Exception:  # noqa: BLE001 - state read from another thread: best effort
            keys = 0
    return {
        "numRecordsIn": m.rows_in if m else 0,
        "numRecordsOut": m.rows_out if m else 0,
        "numRecordsInPerSecond": round(rate_in, 3),
        "numRecordsOutPerSecond": round(rate_out, 3),
        "numBatchesIn": m.batches_in if m else 0,
        "numBatchesOut": batches_out,
        "busyTimeMsPerSecond": round(busy, 1),
        "backPressuredTimeMsPerSecond": round(bp, 1),
        "idleTimeMsPerSecond": round(max(0.0, 1000 - busy - bp), 1),
        "currentInputWatermark": in_wm,
        "currentOutputWatermark": out_wm,
        "numLateRecordsDropped": m.late_rows_dropped if m else 0,
        "numRecordsSkipped": int(m.extra.get("skipped_rows", 0)) if m else 0,
        "stateSizeKeys": keys,
    }


def job_detail(handle: Any, mon: JobMonitor) -> dict[str, Any]:
    """`/jobs/:jobid`: the job with its vertices (one per JobGraph node) and plan."""
    doc = job_summary(handle)
    state = doc["state"]
    ex = mon.executor
    vertices: list[dict[str, Any]] = []
    plan_nodes: list[dict[str, Any]] = []
    if ex is not None:
        for node in ex.graph.nodes:
            vid = vertex_id(ex, node.id)
            metrics = vertex_metrics(mon, node.id)
            name = node.label or node.operator
            vertices.append(
                {
                    "id": vid,
                    "name": name,
                    "operator": node.operator,
                    "node-id": node.id,
                    "parallelism": node.parallelism,
                    "maxParallelism": MAX_PARALLELISM.get(ex.graph.config),
                    "status": state,
                    "start-time": doc["start-time"],
                    "end-time": doc["end-time"],
                    "duration": doc["duration"],
                    "changelog-mode": node.changelog_mode,
                    "metrics": {
                        "read-records": metrics["numRecordsIn"],
                        "read-records-complete": state != "RUNNING",
                        "write-records": metrics["numRecordsOut"],
                        "write-records-complete": state != "RUNNING",
                        "accumulated-busy-time": metrics["busyTimeMsPerSecond"],
                        "accumulated-backpressured-time": metrics["backPressuredTimeMsPerSecond"],
                        **metrics,
                    },
                }
            )
            plan_nodes.append(
                {
                    "id": vid,
                    "parallelism": node.parallelism,
                    "operator": node.operator,
                    "operator_strategy": "",
                    "description": name,
                    "inputs": [
                        {
                            "num": i,
                            "id": vertex_id(ex, src),
                            "ship_strategy": "FORWARD",
                            "exchange": "pipelined_bounded",
                        }
                        for i, src in enumerate(node.inputs)
                    ],
                    "optimizer_properties": {},
                }
            )
    doc.update(
        {
            "isStoppable": state == "RUNNING",
            "now": int(time.time() * 1000),
            "job-type": "STREAMING" if _is_streaming(ex) else "BATCH",
            "maxParallelism": -1,
            "timestamps": {state: doc["last-modification"], "INITIALIZING": doc["start-time"]},
            "vertices": vertices,
            "status-counts": {state: len(vertices)},
            "plan": {"jid": handle.job_id, "name": handle.name, "type": doc.get("job-type", ""), "nodes": plan_nodes},
            "restored-from": getattr(ex, "restored_from", None),
            "restarts": int(getattr(ex, "restarts", 0) or 0),
        }
    )
    doc["plan"]["type"] = doc["job-type"]
    return doc


def _is_streaming(ex: Any) -> bool:
    return ex is None or str(getattr(ex.graph, "mode", "streaming")).lower() != "batch"


def exceptions(handle: Any) -> dict[str, Any]:
    """`/jobs/:jobid/exceptions`: Flink 2's exception history. A failed job's error is its
    one entry, `stacktrace` the text the CLI prints (a failing Python function: its name and
    the user's own traceback lines, docs/udf.md); a job that has not failed has none. Only
    the final failure is kept (not each restarted attempt's)."""
    err = handle.error
    entries: list[dict[str, Any]] = []
    if err is not None:
        cls = type(err)
        entries.append(
            {
                "exceptionName": f"{cls.__module__}.{cls.__qualname__}",
                "stacktrace": f"{cls.__name__}: {err}",
                "timestamp": _ms(handle.end_time),
                "failureLabels": {},
                "concurrentExceptions": [],
            }
        )
    return {"exceptionHistory": {"entries": entries, "truncated": False}}


def checkpoints(mon: JobMonitor) -> dict[str, Any]:
    """`/jobs/:jobid/checkpoints`: counts, latest and history (newest first)."""
    history = mon.checkpoint_history()
    ex = mon.executor
    restored = getattr(ex, "restored_from", None)
    completed = [c for c in history if c["status"] == "COMPLETED"]
    durations = [c["end_to_end_duration"] or 0 for c in completed]
    sizes = [c["state_size"] for c in completed]

    def stats(values: list[int]) -> dict[str, float]:
        if not values:
            return {"min": 0, "max": 0, "avg": 0}
        return {"min": min(values), "max": max(values), "avg": sum(values) / len(values)}

    def latest(pred: Any) -> dict[str, Any] | None:
        return next((c for c in history if pred(c)), None)

    counts = dict(mon.counts)
    return {
        "counts": {"restored": 1 if restored else 0, **counts},
        "summary": {"state_size": stats(sizes), "end_to_end_duration": stats(durations)},
        "latest": {
            "completed": latest(lambda c: c["status"] == "COMPLETED" and not c["is_savepoint"]),
            "savepoint": latest(lambda c: c["status"] == "COMPLETED" and c["is_savepoint"]),
            "failed": latest(lambda c: c["status"] == "FAILED"),
            "restored": {"external_path": restored} if restored else None,
        },
        "history": history,
    }


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def prometheus(handles: list[Any], monitors: dict[str, JobMonitor]) -> str:
    """`/metrics`: Prometheus text exposition format 0.0.4."""
    lines: list[str] = []
    states = [job_state(h) for h in handles]
    lines += ["# HELP streamsql_jobs Jobs of this process by state.", "# TYPE streamsql_jobs gauge"]
    for s in ("RUNNING", "FINISHED", "CANCELED", "FAILED"):
        lines.append(f'streamsql_jobs{{state="{s}"}} {states.count(s)}')
    series: dict[str, tuple[str, str, list[str]]] = {
        "numRecordsIn": ("streamsql_operator_records_in_total", "counter", []),
        "numRecordsOut": ("streamsql_operator_records_out_total", "counter", []),
        "numBatchesIn": ("streamsql_operator_batches_in_total", "counter", []),
        "numRecordsInPerSecond": ("streamsql_operator_records_in_per_second", "gauge", []),
        "numRecordsOutPerSecond": ("streamsql_operator_records_out_per_second", "gauge", []),
        "busyTimeMsPerSecond": ("streamsql_operator_busy_time_ms_per_second", "gauge", []),
        "backPressuredTimeMsPerSecond": ("streamsql_operator_backpressured_time_ms_per_second", "gauge", []),
        "currentInputWatermark": ("streamsql_operator_current_input_watermark", "gauge", []),
        "numLateRecordsDropped": ("streamsql_operator_late_records_dropped_total", "counter", []),
        "numRecordsSkipped": ("streamsql_operator_records_skipped_total", "counter", []),
    }
    ckpt: list[str] = []
    for h in handles:
        mon = monitors.get(h.job_id)
        ex = mon.executor if mon is not None else None
        if mon is None or ex is None:
            continue
        for node in ex.graph.nodes:
            values = vertex_metrics(mon, node.id, with_state=False)
            labels = (
                f'job_id="{h.job_id}",job_name="{_label(h.name)}",vertex_id="{vertex_id(ex, node.id)}",'
                f'operator="{node.operator}",label="{_label(node.label or node.operator)}"'
            )
            for key, (_, _, out) in series.items():
                out.append(f"{{{labels}}} {values[key]}")
        for k in ("completed", "failed", "in_progress"):
            ckpt.append(f'{{job_id="{h.job_id}",status="{k}"}} {mon.counts[k]}')
    for name, kind, out in series.values():
        if out:
            lines += [f"# TYPE {name} {kind}", *(name + v for v in out)]
    if ckpt:
        lines += ["# TYPE streamsql_job_checkpoints gauge", *("streamsql_job_checkpoints" + v for v in ckpt)]
    return "\n".join(lines) + "\n"
