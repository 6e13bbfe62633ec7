CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, MAX(v) AS max_v, COUNT(DISTINCT s) FILTER (WHERE v > 0) AS n FROM t GROUP BY k;
