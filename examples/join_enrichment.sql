-- Enrich click events with user attributes (a regular join), then count per country.
-- Run from the repository root:
--   streamsql -f examples/join_enrichment.sql --mode batch
--   streamsql -f examples/join_enrichment.sql              (streaming: an updating result)

CREATE TABLE clicks (
  user_name STRING,
  url STRING,
  ts TIMESTAMP(3)
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/clicks.csv',
  'format' = 'csv'
);

CREATE TABLE users (
  name STRING,
  country STRING,
  tier STRING
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/users.csv',
  'format' = 'csv'
);

SELECT u.country, u.tier, COUNT(*) AS clicks
FROM clicks c JOIN users u ON c.user_name = u.name
GROUP BY u.country, u.tier;
