CREATE TABLE orders (
  oid INT,
  cur STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
CREATE TABLE rates (
  cur STRING,
  rate INT,
  ts TIMESTAMP(3),
  PRIMARY KEY (cur) NOT ENFORCED,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'rates.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.oid, r.rate
FROM orders o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.cur = r.cur;
