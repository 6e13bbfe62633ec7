"""Kappa backfill-then-live: one streaming SQL job over a monitored directory.

The job (examples/kappa/revenue_per_customer.sql) first reads the history already in the
directory (the backfill files), then keeps watching it: this script waits for the
backfilled result, drops a new day's file into the directory, waits for the result to
include it, and stops the job. In batch mode (--batch) the same SQL is a bounded job
over the backfill only.

Run from the repository root:  python examples/kappa_backfill_live.py [--batch]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

from streamsql import EnvironmentSettings, RowKind, TableEnvironment

HERE = Path(__file__).resolve().parent / "kappa"


def load_sql(orders_dir: Path) -> tuple[str, str]:
    """(the CREATE TABLE, the query) of the example's SQL file, for `orders_dir`."""
    text = (HERE / "revenue_per_customer.sql").read_text().replace("${ORDERS_DIR}", str(orders_dir))
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    ddl, query = (s.strip() for s in body.split(";") if s.strip())
    return ddl, query


def show(title: str, table: dict[str, tuple[int, Decimal]]) -> None:
    print(title)
    for customer, (orders, revenue) in sorted(table.items()):
        print(f"  {customer:<6} orders={orders} revenue={revenue}")


def run_batch(orders_dir: Path) -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    ddl, query = load_sql(orders_dir)
    t_env.execute_sql(ddl)
    rows = t_env.execute_sql(query).to_arrow().to_pylist()
    show("backfill (batch):", {r["customer"]: (r["orders"], r["revenue"]) for r in rows})


def run_streaming(orders_dir: Path, timeout_s: float = 60.0) -> None:
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    ddl, query = load_sql(orders_dir)
    t_env.execute_sql(ddl)
    table: dict[str, tuple[int, Decimal]] = {}
    lock = threading.Lock()
    result = t_env.execute_sql(query)
    rows = result.collect()  # unbounded: rows arrive as the job runs

    def consume() -> None:
        for row in rows:  # apply the changelog to a materialized view of the result
            with lock:
                if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                    table[row[0]] = (row[1], row[2])
                else:
                    table.pop(row[0], None)

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()

    def wait_for_orders(n: int) -> dict[str, tuple[int, Decimal]]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with lock:
                if sum(o for o, _ in table.values()) == n:
                    return dict(table)
            time.sleep(0.05)
        raise TimeoutError(f"the job did not reach {n} orders in {timeout_s}s")

    backfilled = sum(len(p.read_text().splitlines()) for p in orders_dir.glob("*.csv"))
    show("after the backfill (streaming):", wait_for_orders(backfilled))
    # A new file lands: written under a hidden name, then renamed (the source skips '.' files).
    new = HERE / "live" / "orders-2024-01-03.csv"
    tmp = orders_dir / f".{new.name}.inprogress"
    shutil.copy(new, tmp)
    tmp.rename(orders_dir / new.name)
    show("live, after a new file arrived:", wait_for_orders(backfilled + len(new.read_text().splitlines())))
    result.cancel()  # stops the job (the consumer's iterator then ends)
    consumer.join(10)
    rows.close()


def main(batch: bool = False) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        orders_dir = Path(tmp) / "orders"
        shutil.copytree(HERE / "backfill", orders_dir)
        if batch:
            run_batch(orders_dir)
        else:
            run_streaming(orders_dir)


if __name__ == "__main__":
    main(batch="--batch" in sys.argv[1:])
