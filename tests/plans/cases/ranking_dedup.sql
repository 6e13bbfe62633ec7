CREATE TABLE ev (
  ts TIMESTAMP(3),
  usr STRING,
  action STRING,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'events.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT usr, action, ts FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY usr ORDER BY ts DESC) AS rn FROM ev
) WHERE rn = 1;
