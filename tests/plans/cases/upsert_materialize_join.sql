CREATE TABLE orders (
  order_id INT,
  product_id INT,
  qty INT
) WITH (
  'connector' = 'kafka',
  'topic' = 'orders',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'properties.group.id' = 'plans',
  'scan.startup.mode' = 'earliest-offset',
  'format' = 'debezium-json'
);

CREATE TABLE products (
  id INT,
  name STRING,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'products',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

CREATE TABLE last_order_by_product (
  name STRING,
  order_id INT,
  qty INT,
  PRIMARY KEY (name) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'by-product',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXPLAIN CHANGELOG_MODE INSERT INTO last_order_by_product
SELECT p.name, o.order_id, o.qty FROM orders o JOIN products p ON o.product_id = p.id;
