"""Per-operator statistics of a job (`--stats` in the CLI, `TableResult.metrics()`,
`JobHandle.metrics()`): rows in/out, input batches, late rows dropped and busy time
(time spent inside the operator's process_batch / on_watermark / end_input, measured by
the local executor with perf_counter)."""

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
                "extra": extra,
            }
        )
    return out


def format_stats(rows: list[dict[str, Any]]) -> str:
    """A plain-text table of `operator_metrics` rows."""
    header = ("id", "operator", "rows in", "rows out", "batches", "late dropped", "busy ms")
    body = [
        (
            str(r["id"]),
            r["operator"],
            str(r["rows_in"]),
            str(r["rows_out"]),
            str(r["batches_in"]),
            str(r["late_rows_dropped"]),
            f"{r['busy_ms']:.1f}",
        )
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]

    def line(cells: tuple[str, ...]) -> str:
        return " | ".join(
            c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(b) for b in body)])
