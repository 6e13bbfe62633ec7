CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT window_start, window_end, window_time, k, COUNT(*) AS cnt, SUM(v) AS sum_v, MAX(ts) AS max_ts
FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, window_time, k;
