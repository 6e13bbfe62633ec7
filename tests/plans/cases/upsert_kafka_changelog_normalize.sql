CREATE TABLE accounts (
  id INT,
  grp STRING,
  balance BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'accounts',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXPLAIN CHANGELOG_MODE SELECT grp, COUNT(*) AS n, SUM(balance) AS total FROM accounts GROUP BY grp;
