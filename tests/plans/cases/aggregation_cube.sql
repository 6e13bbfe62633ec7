CREATE TABLE t (
  a STRING,
  b INT,
  v INT
) WITH ('connector' = 'filesystem', 'path' = 'vals.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT a, b, GROUPING_ID(a, b) AS gid, COUNT(*) AS n, MIN(v) AS mn, MAX(v) AS mx, STDDEV_POP(v) AS sd
FROM t GROUP BY CUBE (a, b);
