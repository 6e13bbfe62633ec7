CREATE TABLE scores (
  id INT,
  k STRING,
  v INT
) WITH ('connector' = 'filesystem', 'path' = 'scores.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, v, id FROM (
  SELECT *, ROW_NUMBER() OVER (ORDER BY v ASC, id ASC) AS rn FROM scores WHERE k <> 'c'
) WHERE rn > 1 AND rn <= 4;
