CREATE TABLE orders (oid INT, cid INT, amount DECIMAL(6, 2)) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE customers (cid INT, name STRING, country STRING) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.oid,
       (SELECT COUNT(*) FROM customers c WHERE c.cid = o.cid) AS n_customers
FROM orders o
WHERE o.amount > (SELECT AVG(amount) FROM orders);
