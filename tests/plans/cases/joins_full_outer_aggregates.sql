CREATE TABLE plan (k STRING, qty INT) WITH ('connector' = 'filesystem', 'path' = 'p.csv', 'format' = 'csv');
CREATE TABLE actual (k STRING, qty INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT COALESCE(p.k, a.k) AS k, p.planned, a.done
FROM (SELECT k, SUM(qty) AS planned FROM plan GROUP BY k) p
FULL OUTER JOIN (SELECT k, SUM(qty) AS done FROM actual GROUP BY k) a
ON p.k = a.k;
