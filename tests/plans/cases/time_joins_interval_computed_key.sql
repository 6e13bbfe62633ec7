CREATE TABLE orders (
  oid INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
CREATE TABLE shipments (
  sid STRING,
  oid BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'shipments.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.oid, s.sid, o.ts AS order_ts, s.ts AS ship_ts
FROM orders o FULL JOIN shipments s
  ON CAST(o.oid AS BIGINT) = s.oid AND s.sid <> 'x'
  AND s.ts BETWEEN o.ts - INTERVAL '5' SECOND AND o.ts + INTERVAL '10' SECOND;
