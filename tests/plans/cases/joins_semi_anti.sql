CREATE TABLE orders (oid INT, cid INT, amount DECIMAL(6, 2)) WITH ('connector' = 'filesystem', 'path' = 'o.csv', 'format' = 'csv');
CREATE TABLE customers (cid INT, name STRING, country STRING) WITH ('connector' = 'filesystem', 'path' = 'c.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT o.oid, o.cid FROM orders o
WHERE o.cid IN (SELECT cid FROM customers WHERE country = 'DE')
  AND NOT EXISTS (SELECT 1 FROM customers c WHERE c.cid = o.cid AND c.name LIKE 'B%');
