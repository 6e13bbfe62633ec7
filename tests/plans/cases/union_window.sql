CREATE TABLE a (
  k STRING,
  ts TIMESTAMP(3),
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');
CREATE TABLE b (
  k STRING,
  ts TIMESTAMP(3),
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT window_start, window_end, k, SUM(v) AS total
FROM TABLE(TUMBLE(TABLE (SELECT * FROM a UNION ALL SELECT * FROM b), DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, k;
