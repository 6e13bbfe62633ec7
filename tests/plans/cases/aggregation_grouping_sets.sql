CREATE TABLE t (
  k STRING,
  v INT,
  s STRING,
  d DOUBLE
) WITH ('connector' = 'filesystem', 'path' = 'kv.json', 'format' = 'json');

EXPLAIN CHANGELOG_MODE SELECT k, s, GROUPING(k) AS gk, GROUPING(s) AS gs, GROUPING_ID(k, s) AS gid, COUNT(*) AS n, SUM(v) AS sv
FROM t
GROUP BY GROUPING SETS ((k, s), (k), ());
