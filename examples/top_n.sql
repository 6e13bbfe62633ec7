-- Top-N: each user's two most visited pages (ROW_NUMBER over a grouped count).
-- Run from the repository root:
--   streamsql -f examples/top_n.sql --mode batch
--   streamsql -f examples/top_n.sql              (streaming: rows retract as the ranking changes)

CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/clicks.csv',
  'format' = 'csv'
);

SELECT user_name, url, visits, rn FROM (
  SELECT user_name, url, visits,
         ROW_NUMBER() OVER (PARTITION BY user_name ORDER BY visits DESC, url ASC) AS rn
  FROM (SELECT user_name, url, COUNT(*) AS visits FROM clicks GROUP BY user_name, url)
) WHERE rn <= 2;
