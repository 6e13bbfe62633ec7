"""Per-operator statistics of a job (`--stats` in the CLI, `TableResult.metrics()`,
`JobHandle.metrics()`): rows in/out, input batches, late rows dropped and busy time
(time spent inside the operator's process_batch / on_watermark / end_input, measured by
the local executor with perf_counter) and the state each operator holds (`state_size()`:
keys, stored rows, approximate bytes; docs/state_ttl.md)."""

from __future__ import annotations

from typing import Any


def operator_metrics(executor: Any) -> list[dict[str, Any]]:
    """One dict per JobGraph node, in node order; [] when the job has no (local) executor."""
    if executor is None or not hasattr(executor, "metrics") or not hasattr(executor, "graph"):
        return []
    out: list[dict[str, Any]] = []
    for node in executor.graph.nodes:
        m = executor.metrics.get(node.id)
        if m is None:
            continue
        extra = dict(m.extra)
        busy_ns = int(extra.pop("busy_ns", 0))
        backpressured_ns = int(extra.pop("backpressured_ns", 0))  # parallel jobs: waiting for credits
        state = _state_size(executor, node.id)
        out.append(
            {
                "id": node.id,
                "operator": node.operator,
                "label": node.label,
                "rows_in": m.rows_in,
                "rows_out": m.rows_out,
                "batches_in": m.batches_in,
                "late_rows_dropped": m.late_rows_dropped,
                "busy_ms": busy_ns / 1e6,
                "backpressured_ms": backpressured_ns / 1e6,
                "state_keys": state.get("keys"),
                "state_bytes": state.get("bytes"),
                "extra": extra,
            }
        )
    return out


def _state_size(executor: Any, node_id: int) -> dict[str, int]:
    """The operator's `state_size()` (empty when it keeps no keyed state or is remote)."""
    op = getattr(executor, "operators", {}).get(node_id)
    try:
        return dict(op.state_size()) if op is not None else {}
    except Exception:  # noqa: BLE001 - metrics are best effort (state read from another thread)
        return {}


def format_stats(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of `operator_metrics` rows."""
    header: tuple[str, ...] = (
        "id",
        "operator",
        "rows in",
        "rows out",
        "batches",
        "late dropped",
        "busy ms",
        "backpressured ms",
        "state keys",
        "state KiB",
    )
    skipped = any(r.get("extra", {}).get("skipped_rows") for r in rows)
    if skipped:  # rows dropped by '*.ignore-parse-errors': a column only when there are some
        header = (*header, "skipped rows")
    body = [
        (
            str(r["id"]),
            r["operator"],
            str(r["rows_in"]),
            str(r["rows_out"]),
            str(r["batches_in"]),
            str(r["late_rows_dropped"]),
            f"{r['busy_ms']:.1f}",
            f"{r.get('backpressured_ms', 0.0):.1f}",
            "" if r.get("state_keys") is None else str(r["state_keys"]),
            "" if r.get("state_bytes") is None else f"{r['state_bytes'] / 1024:.1f}",
        )
        + ((str(r.get("extra", {}).get("skipped_rows", 0)),) if skipped else ())
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return " | ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(b) for b in body)])


def skipped_summary(rows: list[dict[str, Any]]) -> str | None:
    """The end-of-job line when a format skipped unparsable rows ('*.ignore-parse-errors'),
    naming each source; None when none was skipped."""
    parts = [(r.get("label") or r["operator"], int(r.get("extra", {}).get("skipped_rows", 0))) for r in rows]
    parts = [(label, n) for label, n in parts if n]
    if not parts:
        return None
    total = sum(n for _, n in parts)
    where = ", ".join(f"{label}: {n}" for label, n in parts)
    return f"[WARNING] {total} input row(s) could not be parsed and were skipped ('ignore-parse-errors'): {where}"
