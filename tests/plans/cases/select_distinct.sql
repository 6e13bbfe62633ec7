CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT DISTINCT k, s FROM t WHERE v BETWEEN 1 AND 5;
