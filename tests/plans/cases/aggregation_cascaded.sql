CREATE TABLE bids (
  id INT,
  category INT,
  price DECIMAL(10, 2)
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT category, AVG(winning) AS avg_price, MIN(winning) AS lo, MAX(winning) AS hi, COUNT(*) AS n
FROM (SELECT id, category, MAX(price) AS winning FROM bids GROUP BY id, category)
GROUP BY category;
