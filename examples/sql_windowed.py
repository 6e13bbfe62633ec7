"""Clicks per user and minute with SQL strings from Python (compare table_api_windowed.py).

Run from the repository root:  python examples/sql_windowed.py [--batch]
"""

from __future__ import annotations

import sys
from pathlib import Path

from streamsql import EnvironmentSettings, TableEnvironment

DATA = Path(__file__).resolve().parent / "data" / "clicks.csv"


def main(batch: bool = False) -> None:
    settings = EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode()
    t_env = TableEnvironment.create(settings)
    t_env.execute_sql(f"""
        CREATE TABLE clicks (
          user_name STRING, url STRING, ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
        ) WITH ('connector' = 'filesystem', 'path' = '{DATA}', 'format' = 'csv')
    """)
    per_minute = t_env.sql_query("""
        SELECT window_start, window_end, user_name, COUNT(url) AS clicks, COUNT(DISTINCT url) AS pages
        FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
        GROUP BY window_start, window_end, user_name
    """)
    df = per_minute.to_pandas()  # the final table, as pandas
    print(df.sort_values(["window_start", "user_name"]).to_string(index=False))


if __name__ == "__main__":
    main(batch="--batch" in sys.argv)
