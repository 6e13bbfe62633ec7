CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, v * 2 AS w, s FROM t WHERE v > 2 AND s IS NOT NULL;
