CREATE TABLE t (
  ts TIMESTAMP(3),
  k STRING,
  v INT,
  s STRING,
  WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
) WITH ('connector' = 'filesystem', 'path' = 't.csv', 'format' = 'csv');

CREATE TABLE snk (k STRING, total BIGINT) WITH ('connector' = 'blackhole');
EXPLAIN CHANGELOG_MODE INSERT INTO snk SELECT k, v FROM t WHERE v > 0;
