CREATE TABLE orders (
  id INT,
  amount INT,
  proc_time AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = 'orders.csv', 'format' = 'csv');
CREATE TABLE shipments (
  order_id INT,
  ship STRING,
  proc_time AS PROCTIME()
) WITH ('connector' = 'filesystem', 'path' = 'shipments.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.id, o.amount, s.ship
FROM orders o LEFT JOIN shipments s
ON o.id = s.order_id AND o.proc_time BETWEEN s.proc_time - INTERVAL '4' HOUR AND s.proc_time;
