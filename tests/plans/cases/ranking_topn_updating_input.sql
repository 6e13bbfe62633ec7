CREATE TABLE scores (
  id INT,
  k STRING,
  v INT
) WITH ('connector' = 'filesystem', 'path' = 'scores.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, total FROM (
  SELECT k, total, ROW_NUMBER() OVER (ORDER BY total DESC) AS rn
  FROM (SELECT k, SUM(v) AS total FROM scores GROUP BY k)
) WHERE rn <= 2;
