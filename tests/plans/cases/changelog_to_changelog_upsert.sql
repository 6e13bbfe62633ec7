CREATE TABLE accounts (
  name STRING,
  score BIGINT,
  PRIMARY KEY (name) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'accounts',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXPLAIN CHANGELOG_MODE SELECT * FROM TO_CHANGELOG(input => TABLE accounts);
