CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'events.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, ts, v, SUM(v) OVER w AS sum3, COUNT(v) OVER w AS cnt3, MIN(v) OVER w AS min3
FROM t
WINDOW w AS (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
