CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'rows.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, v, ts FROM t ORDER BY ts, v DESC;
