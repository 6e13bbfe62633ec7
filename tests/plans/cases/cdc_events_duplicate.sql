SET 'table.exec.source.cdc-events-duplicate' = 'true';

CREATE TABLE products (
  id INT,
  name STRING,
  price BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'kafka',
  'topic' = 'products',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'scan.bounded.mode' = 'latest-offset',
  'properties.group.id' = 'explain',
  'format' = 'debezium-json'
);

EXPLAIN CHANGELOG_MODE SELECT name, SUM(price) AS total FROM products GROUP BY name;
