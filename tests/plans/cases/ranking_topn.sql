CREATE TABLE scores (
  id INT,
  k STRING,
  v INT
) WITH ('connector' = 'filesystem', 'path' = 'scores.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT k, rn, v, id FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id ASC) AS rn FROM scores
) WHERE rn <= 3;
