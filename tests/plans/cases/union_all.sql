CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, v FROM t WHERE v > 10 UNION ALL SELECT s, CAST(NULL AS INT) FROM t;
