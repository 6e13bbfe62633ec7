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

CREATE TABLE by_name (
  name STRING,
  balance BIGINT,
  PRIMARY KEY (name) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'by-name',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXPLAIN CHANGELOG_MODE INSERT INTO by_name SELECT CONCAT(grp, '-', CAST(id AS STRING)), balance FROM accounts;
