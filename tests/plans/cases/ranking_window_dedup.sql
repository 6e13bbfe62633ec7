CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'events.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT window_start, window_end, k, v, ts
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end, k ORDER BY ts ASC) AS rn
  FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))
) WHERE rn = 1;
