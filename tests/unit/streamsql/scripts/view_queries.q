# view_queries.q - views over views, joins and aggregates; querying them; SHOW CREATE VIEW's expanded query

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

CREATE VIEW prices (item, price) AS VALUES ('tea', 3), ('cake', 5), ('pie', 4);
[INFO] Execute statement succeeded.
!info

CREATE VIEW orders AS SELECT * FROM (VALUES (1, 'tea', 2), (2, 'cake', 1), (3, 'tea', 1)) AS o (id, item, qty);
[INFO] Execute statement succeeded.
!info

CREATE VIEW revenue AS
SELECT o.item, SUM(o.qty * p.price) AS total
FROM orders o JOIN prices p ON o.item = p.item
GROUP BY o.item
HAVING SUM(o.qty) > 0;
[INFO] Execute statement succeeded.
!info

SHOW CREATE VIEW revenue;
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                               result |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE VIEW `default_catalog`.`default_database`.`revenue` (
  `item`,
  `total`
)
AS SELECT `o`.`item`, SUM(`o`.`qty` * `p`.`price`) AS `total`
FROM `default_catalog`.`default_database`.`orders` AS `o`
INNER JOIN `default_catalog`.`default_database`.`prices` AS `p` ON `o`.`item` = `p`.`item`
GROUP BY `o`.`item`
HAVING SUM(`o`.`qty`) > 0
 |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

SELECT * FROM revenue ORDER BY item;
+------+-------+
| item | total |
+------+-------+
| cake |     5 |
|  tea |     9 |
+------+-------+
2 rows in set
!ok

CREATE VIEW top_item AS SELECT item FROM revenue ORDER BY total DESC LIMIT 1;
[INFO] Execute statement succeeded.
!info

SELECT * FROM top_item;
+------+
| item |
+------+
|  tea |
+------+
1 row in set
!ok

SHOW VIEWS LIKE '%e%';
+-----------+
| view name |
+-----------+
|    orders |
|    prices |
|   revenue |
|  top_item |
+-----------+
4 rows in set
!ok

# dropping a view keeps the views over it (as in Flink): they fail when queried
DROP VIEW revenue;
[INFO] Execute statement succeeded.
!info

SELECT * FROM top_item;
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: Object 'revenue' not found within 'default_catalog.default_database'
At line 1, column 42:
  CREATE VIEW top_item AS SELECT item FROM revenue ORDER BY total DESC LIMIT 1
                                           ^
!error
