CREATE TABLE t (
  k STRING,
  v INT
) WITH ('connector' = 'filesystem', 'path' = 'rows.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, v FROM t WHERE v > 0 LIMIT 3;
