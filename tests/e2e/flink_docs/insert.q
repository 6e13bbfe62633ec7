# insert.q - the examples of Flink 2.x's SQL reference, "INSERT Statement" page
# (docs/dev/table/sql/insert.md), in batch mode with filesystem tables so the rows can be
# read back. The page's partition examples name columns `user` and `date` without quotes,
# which Flink's parser refuses (reserved keywords); they run quoted here.

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

# "Run an INSERT statement": one INSERT, then a statement set over two sinks
CREATE TABLE Orders (`user` BIGINT, product STRING, amount INT) WITH ('connector' = 'filesystem', 'path' = 'orders', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO Orders VALUES (1, 'Rubber duck', 3), (2, 'Glass vase', 1), (3, 'Rubber band', 10);
[INFO] Complete execution of the SQL update statement.
!info

CREATE TABLE RubberOrders(product STRING, amount INT) WITH ('connector' = 'filesystem', 'path' = 'rubber', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

SHOW TABLES;
+--------------+
|   table name |
+--------------+
|       Orders |
| RubberOrders |
+--------------+
2 rows in set
!ok

INSERT INTO RubberOrders SELECT product, amount FROM Orders WHERE product LIKE '%Rubber%';
[INFO] Complete execution of the SQL update statement.
!info

# VARCHAR without a length is VARCHAR(2147483647) in Flink's SQL (not VARCHAR(1))
CREATE TABLE GlassOrders(product VARCHAR, amount INT) WITH ('connector' = 'filesystem', 'path' = 'glass', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

DESCRIBE GlassOrders;
+---------+--------+------+-----+--------+-----------+
|    name |   type | null | key | extras | watermark |
+---------+--------+------+-----+--------+-----------+
| product | STRING | TRUE |     |        |           |
|  amount |    INT | TRUE |     |        |           |
+---------+--------+------+-----+--------+-----------+
2 rows in set
!ok

EXECUTE STATEMENT SET
BEGIN
INSERT INTO RubberOrders SELECT product, amount FROM Orders WHERE product LIKE '%Rubber%';
INSERT INTO GlassOrders SELECT product, amount FROM Orders WHERE product LIKE '%Glass%';
END;
[INFO] Complete execution of the SQL update statement.
!info

BEGIN STATEMENT SET;
[INFO] Execute statement succeeded.
!info

INSERT INTO GlassOrders SELECT product, amount FROM Orders WHERE product LIKE '%Glass%';
[INFO] Execute statement succeeded.
!info

END;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM RubberOrders ORDER BY product, amount;
+-------------+--------+
|     product | amount |
+-------------+--------+
| Rubber band |     10 |
| Rubber band |     10 |
| Rubber duck |      3 |
| Rubber duck |      3 |
+-------------+--------+
4 rows in set
!ok

SELECT product, CAST(product AS VARCHAR) AS same, amount FROM GlassOrders ORDER BY amount;
+------------+------------+--------+
|    product |       same | amount |
+------------+------------+--------+
| Glass vase | Glass vase |      1 |
| Glass vase | Glass vase |      1 |
+------------+------------+--------+
2 rows in set
!ok

# "Insert from select queries"
CREATE TABLE page_view_source (`user` STRING, cnt INT, country STRING) WITH ('connector' = 'filesystem', 'path' = 'page_views', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO page_view_source VALUES ('ann', 1, 'China'), ('bob', 2, 'France');
[INFO] Complete execution of the SQL update statement.
!info

CREATE TABLE country_page_view (`user` STRING, cnt INT, `date` STRING, country STRING)
PARTITIONED BY (`date`, country)
WITH ('connector' = 'filesystem', 'path' = 'country_page_view', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO country_page_view PARTITION (`date`='2019-8-30', country='China')
  SELECT `user`, cnt FROM page_view_source;
[INFO] Complete execution of the SQL update statement.
!info

INSERT INTO country_page_view PARTITION (`date`='2019-8-30')
  SELECT `user`, cnt, country FROM page_view_source;
[INFO] Complete execution of the SQL update statement.
!info

SHOW PARTITIONS country_page_view;
+-------------------------------+
|                partition name |
+-------------------------------+
|  date=2019-8-30/country=China |
| date=2019-8-30/country=France |
+-------------------------------+
2 rows in set
!ok

INSERT OVERWRITE country_page_view PARTITION (`date`='2019-8-30', country='China')
  SELECT `user`, cnt FROM page_view_source;
[INFO] Complete execution of the SQL update statement.
!info

INSERT OVERWRITE country_page_view PARTITION (`date`='2019-8-30')
  SELECT `user`, cnt, country FROM page_view_source;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM country_page_view ORDER BY `user`;
+------+-----+-----------+---------+
| user | cnt |      date | country |
+------+-----+-----------+---------+
|  ann |   1 | 2019-8-30 |   China |
|  bob |   2 | 2019-8-30 |  France |
+------+-----+-----------+---------+
2 rows in set
!ok

# a column list: `cnt` is NULL
INSERT INTO country_page_view PARTITION (`date`='2019-8-31', country='China') (`user`)
  SELECT `user` FROM page_view_source;
[INFO] Complete execution of the SQL update statement.
!info

SHOW PARTITIONS country_page_view PARTITION (`date`='2019-8-31');
+------------------------------+
|               partition name |
+------------------------------+
| date=2019-8-31/country=China |
+------------------------------+
1 row in set
!ok

# "Insert values into tables"
CREATE TABLE students (name STRING, age INT, gpa DECIMAL(3, 2)) WITH ('connector' = 'filesystem', 'path' = 'students', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO students
  VALUES ('fred flintstone', 35, 1.28), ('barney rubble', 32, 2.32);
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM students;
+-----------------+-----+------+
|            name | age |  gpa |
+-----------------+-----+------+
| fred flintstone |  35 | 1.28 |
|   barney rubble |  32 | 2.32 |
+-----------------+-----+------+
2 rows in set
!ok

# UPDATE / DELETE pages (batch mode, a sink that can be rewritten)
UPDATE students SET age = 36 WHERE name = 'fred flintstone';
[INFO] Complete execution of the SQL update statement.
!info

DELETE FROM students WHERE gpa > 2;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM students;
+-----------------+-----+------+
|            name | age |  gpa |
+-----------------+-----+------+
| fred flintstone |  36 | 1.28 |
+-----------------+-----+------+
1 row in set
!ok

# TRUNCATE page: no streamsql connector truncates (Flink's error)
TRUNCATE TABLE students;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: TRUNCATE TABLE statement is not supported for the table `default_catalog`.`default_database`.`students` since the table hasn't implemented the interface org.apache.flink.table.connector.sink.abilities.SupportsTruncate (connector 'filesystem').
!error

# ANALYZE page
ANALYZE TABLE students COMPUTE STATISTICS FOR ALL COLUMNS;
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE page_view_source COMPUTE STATISTICS FOR COLUMNS cnt, country;
[INFO] Execute statement succeeded.
!info
