CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'events.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT *
FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end ORDER BY total DESC) AS rn
  FROM (
    SELECT window_start, window_end, k, SUM(v) AS total
    FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end, k
  )
) WHERE rn <= 2;
