CREATE TABLE orders (oid INT, cid INT, amount DECIMAL(6, 2)) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE customers (cid INT, name STRING, country STRING) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.oid, o.amount, c.name
FROM orders o, customers c
WHERE o.cid = c.cid AND c.country <> 'FR' AND o.amount > c.cid;
