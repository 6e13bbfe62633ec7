CREATE TABLE orders (
  id INT,
  name STRING,
  amount BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'orders.json', 'format' = 'json');

EXPLAIN CHANGELOG_MODE SELECT * FROM TO_CHANGELOG(
  input => TABLE (SELECT name, SUM(amount) AS total FROM orders GROUP BY name),
  op => DESCRIPTOR(kind),
  op_mapping => MAP['INSERT, UPDATE_AFTER', 'U', 'DELETE', 'D']
);
