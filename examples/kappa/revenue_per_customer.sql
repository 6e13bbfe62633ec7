-- Kappa architecture: ONE streaming job first backfills the history already in a
-- directory, then keeps running on the files that land there later (no separate
-- batch job). 'source.monitor-interval' makes the filesystem source unbounded in
-- STREAMING mode: it reads every existing file, then re-lists the directory.
-- ${ORDERS_DIR} is the monitored directory (examples/kappa_backfill_live.py fills it in,
-- runs the job, drops a new file in, shows the updated result and stops the job).

CREATE TABLE orders (
  ts TIMESTAMP(3),
  order_id STRING,
  customer STRING,
  amount DECIMAL(10, 2),
  WATERMARK FOR ts AS ts - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = '${ORDERS_DIR}',
  'format' = 'csv',
  'source.monitor-interval' = '200 ms'
);

SELECT customer, COUNT(*) AS orders, SUM(amount) AS revenue
FROM orders
GROUP BY customer;
