-- Clicks per user and minute, from a CSV file of click events.
-- Run from the repository root:
--   streamsql -f examples/clicks_per_minute.sql                 (streaming: windows fire as the watermark passes)
--   streamsql -f examples/clicks_per_minute.sql --mode batch    (bounded: the same final table)

CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/clicks.csv',
  'format' = 'csv'
);

SELECT window_start, window_end, user_name, COUNT(*) AS clicks, COUNT(DISTINCT url) AS pages
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, user_name;
