# alter.q - the examples of Flink 2.x's SQL reference, "ALTER Statements" page
# (docs/dev/table/sql/alter.md). The SQL CLI session at the top of the page runs as written
# (its DESCRIBE tables are the page's own; the page's client prints the older "Execute
# statement succeed."); the per-clause examples run against tables made to fit them.

CREATE TABLE Orders (`user` BIGINT, product STRING, amount INT) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

ALTER TABLE Orders ADD `order` INT COMMENT 'order identifier' FIRST;
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+---------+--------+------+-----+--------+-----------+------------------+
|    name |   type | null | key | extras | watermark |          comment |
+---------+--------+------+-----+--------+-----------+------------------+
|   order |    INT | TRUE |     |        |           | order identifier |
|    user | BIGINT | TRUE |     |        |           |                  |
| product | STRING | TRUE |     |        |           |                  |
|  amount |    INT | TRUE |     |        |           |                  |
+---------+--------+------+-----+--------+-----------+------------------+
4 rows in set
!ok

ALTER TABLE Orders ADD (ts TIMESTAMP(3), category STRING AFTER product, PRIMARY KEY(`order`) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' HOUR);
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+----------+------------------------+-------+------------+--------+--------------------------+------------------+
|     name |                   type |  null |        key | extras |                watermark |          comment |
+----------+------------------------+-------+------------+--------+--------------------------+------------------+
|    order |                    INT | FALSE | PRI(order) |        |                          | order identifier |
|     user |                 BIGINT |  TRUE |            |        |                          |                  |
|  product |                 STRING |  TRUE |            |        |                          |                  |
| category |                 STRING |  TRUE |            |        |                          |                  |
|   amount |                    INT |  TRUE |            |        |                          |                  |
|       ts | TIMESTAMP(3) *ROWTIME* |  TRUE |            |        | `ts` - INTERVAL '1' HOUR |                  |
+----------+------------------------+-------+------------+--------+--------------------------+------------------+
6 rows in set
!ok

ALTER TABLE Orders MODIFY (amount DOUBLE NOT NULL, category STRING COMMENT 'category identifier' AFTER `order`, WATERMARK FOR ts AS ts);
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+----------+------------------------+-------+------------+--------+-----------+---------------------+
|     name |                   type |  null |        key | extras | watermark |             comment |
+----------+------------------------+-------+------------+--------+-----------+---------------------+
|    order |                    INT | FALSE | PRI(order) |        |           |    order identifier |
| category |                 STRING |  TRUE |            |        |           | category identifier |
|     user |                 BIGINT |  TRUE |            |        |           |                     |
|  product |                 STRING |  TRUE |            |        |           |                     |
|   amount |                 DOUBLE | FALSE |            |        |           |                     |
|       ts | TIMESTAMP(3) *ROWTIME* |  TRUE |            |        |      `ts` |                     |
+----------+------------------------+-------+------------+--------+-----------+---------------------+
6 rows in set
!ok

ALTER TABLE Orders DROP WATERMARK;
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+----------+--------------+-------+------------+--------+-----------+---------------------+
|     name |         type |  null |        key | extras | watermark |             comment |
+----------+--------------+-------+------------+--------+-----------+---------------------+
|    order |          INT | FALSE | PRI(order) |        |           |    order identifier |
| category |       STRING |  TRUE |            |        |           | category identifier |
|     user |       BIGINT |  TRUE |            |        |           |                     |
|  product |       STRING |  TRUE |            |        |           |                     |
|   amount |       DOUBLE | FALSE |            |        |           |                     |
|       ts | TIMESTAMP(3) |  TRUE |            |        |           |                     |
+----------+--------------+-------+------------+--------+-----------+---------------------+
6 rows in set
!ok

ALTER TABLE Orders DROP (amount, ts, category);
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+---------+--------+-------+------------+--------+-----------+------------------+
|    name |   type |  null |        key | extras | watermark |          comment |
+---------+--------+-------+------------+--------+-----------+------------------+
|   order |    INT | FALSE | PRI(order) |        |           | order identifier |
|    user | BIGINT |  TRUE |            |        |           |                  |
| product | STRING |  TRUE |            |        |           |                  |
+---------+--------+-------+------------+--------+-----------+------------------+
3 rows in set
!ok

ALTER TABLE Orders RENAME `order` to `order_id`;
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders;
+----------+--------+-------+---------------+--------+-----------+------------------+
|     name |   type |  null |           key | extras | watermark |          comment |
+----------+--------+-------+---------------+--------+-----------+------------------+
| order_id |    INT | FALSE | PRI(order_id) |        |           | order identifier |
|     user | BIGINT |  TRUE |               |        |           |                  |
|  product | STRING |  TRUE |               |        |           |                  |
+----------+--------+-------+---------------+--------+-----------+------------------+
3 rows in set
!ok

SHOW TABLES;
+------------+
| table name |
+------------+
|     Orders |
+------------+
1 row in set
!ok

ALTER TABLE Orders RENAME TO NewOrders;
[INFO] Execute statement succeeded.
!info

SHOW TABLES;
+------------+
| table name |
+------------+
|  NewOrders |
+------------+
1 row in set
!ok

CREATE CATALOG cat2 WITH ('type'='generic_in_memory');
[INFO] Execute statement succeeded.
!info

ALTER CATALOG cat2 SET ('default-database'='db_new');
[INFO] Execute statement succeeded.
!info

DESC CATALOG EXTENDED cat2;
+-------------------------+-------------------+
|               info name |        info value |
+-------------------------+-------------------+
|                    name |              cat2 |
|                    type | generic_in_memory |
|                 comment |                   |
| option:default-database |            db_new |
+-------------------------+-------------------+
4 rows in set
!ok

ALTER CATALOG cat2 COMMENT 'comment for catalog ''cat2''';
[INFO] Execute statement succeeded.
!info

# ADD (the page's MyTable: id, measurement, request_body, col1..col3)
CREATE TABLE MyTable (id INT, measurement BIGINT, request_body STRING, col1 INT, col2 INT, col3 INT)
WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable ADD category_id STRING COMMENT 'identifier of the category';
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable ADD (
    log_ts STRING COMMENT 'log timestamp string' FIRST,
    ts AS TO_TIMESTAMP(log_ts) AFTER log_ts,
    PRIMARY KEY (id) NOT ENFORCED,
    WATERMARK FOR ts AS ts - INTERVAL '3' SECOND
);
[INFO] Execute statement succeeded.
!info

# ADD / DROP PARTITION: streamsql's catalogs keep no partition metadata (a filesystem
# table's partitions are the `k=v/` directories its INSERTs write): refused with a hint
CREATE TABLE Parts (id INT, p1 INT, p2 STRING) PARTITIONED BY (p1, p2)
WITH ('connector' = 'filesystem', 'path' = 'parts', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

ALTER TABLE Parts ADD PARTITION (p1=1,p2='a') with ('k1'='v1');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ALTER TABLE ... ADD PARTITION is not supported: streamsql's catalogs keep no partition metadata; the partitions of table `default_catalog`.`default_database`.`Parts` are the ones its connector stores (SHOW PARTITIONS).
a partition appears when an INSERT writes rows into it (INSERT INTO t PARTITION (k = 'v') ...)
!error

ALTER TABLE Parts ADD PARTITION (p1=1,p2='a') with ('k1'='v1') PARTITION (p1=1,p2='b') with ('k2'='v2');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ALTER TABLE ... ADD PARTITION is not supported: streamsql's catalogs keep no partition metadata; the partitions of table `default_catalog`.`default_database`.`Parts` are the ones its connector stores (SHOW PARTITIONS).
a partition appears when an INSERT writes rows into it (INSERT INTO t PARTITION (k = 'v') ...)
!error

ALTER TABLE Parts DROP PARTITION (`p1` = 1, p2 = 'a'), PARTITION (`p1` = 2, p2 = 'a');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ALTER TABLE ... DROP PARTITION is not supported: streamsql's catalogs keep no partition metadata; the partitions of table `default_catalog`.`default_database`.`Parts` are the ones its connector stores (SHOW PARTITIONS).
remove a partition's rows with DELETE FROM t WHERE k = 'v', or replace them with INSERT OVERWRITE t PARTITION (k = 'v') ... (batch mode)
!error

ALTER TABLE Parts DROP PARTITION (`id` = 1);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Partition column 'id' is not a partition key of the table (PARTITIONED BY (p1, p2)).
!error

# a partition column can be neither dropped nor renamed
ALTER TABLE Parts DROP p1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The column `p1` is used as the partition keys.
!error

ALTER TABLE Parts RENAME p2 TO p3;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The column `p2` is used as the partition keys.
!error

# MODIFY (the trailing `--` comments are no part of the expressions)
ALTER TABLE MyTable MODIFY measurement double COMMENT 'unit is bytes per second' AFTER `id`;
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable MODIFY (
    log_ts STRING COMMENT 'log timestamp string' AFTER `id`,  -- reorder columns
    ts AS TO_TIMESTAMP(log_ts) AFTER log_ts,
    PRIMARY KEY (id) NOT ENFORCED,
    WATERMARK FOR ts AS ts -- modify watermark strategy
);
[INFO] Execute statement succeeded.
!info

DESCRIBE MyTable;
+--------------+------------------------+-------+---------+---------------------------+-----------+----------------------------+
|         name |                   type |  null |     key |                    extras | watermark |                    comment |
+--------------+------------------------+-------+---------+---------------------------+-----------+----------------------------+
|           id |                    INT | FALSE | PRI(id) |                           |           |                            |
|       log_ts |                 STRING |  TRUE |         |                           |           |       log timestamp string |
|           ts | TIMESTAMP(3) *ROWTIME* |  TRUE |         | AS TO_TIMESTAMP(`log_ts`) |      `ts` |                            |
|  measurement |                 DOUBLE |  TRUE |         |                           |           |   unit is bytes per second |
| request_body |                 STRING |  TRUE |         |                           |           |                            |
|         col1 |                    INT |  TRUE |         |                           |           |                            |
|         col2 |                    INT |  TRUE |         |                           |           |                            |
|         col3 |                    INT |  TRUE |         |                           |           |                            |
|  category_id |                 STRING |  TRUE |         |                           |           | identifier of the category |
+--------------+------------------------+-------+---------+---------------------------+-----------+----------------------------+
9 rows in set
!ok

# DROP
ALTER TABLE MyTable DROP measurement;
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable DROP (col1, col2, col3);
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable DROP PRIMARY KEY;
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable DROP WATERMARK;
[INFO] Execute statement succeeded.
!info

# RENAME
ALTER TABLE MyTable RENAME request_body TO payload;
[INFO] Execute statement succeeded.
!info

ALTER TABLE MyTable RENAME TO MyTable2;
[INFO] Execute statement succeeded.
!info

DESCRIBE MyTable2;
+-------------+--------------+-------+-----+---------------------------+-----------+----------------------------+
|        name |         type |  null | key |                    extras | watermark |                    comment |
+-------------+--------------+-------+-----+---------------------------+-----------+----------------------------+
|          id |          INT | FALSE |     |                           |           |                            |
|      log_ts |       STRING |  TRUE |     |                           |           |       log timestamp string |
|          ts | TIMESTAMP(3) |  TRUE |     | AS TO_TIMESTAMP(`log_ts`) |           |                            |
|     payload |       STRING |  TRUE |     |                           |           |                            |
| category_id |       STRING |  TRUE |     |                           |           | identifier of the category |
+-------------+--------------+-------+-----+---------------------------+-----------+----------------------------+
5 rows in set
!ok

# SET / RESET
CREATE TABLE DataGenSource (id INT) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

ALTER TABLE DataGenSource SET ('rows-per-second' = '10');
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE DataGenSource;
+--------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                           result |
+--------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`DataGenSource` (
  `id` INT
)
WITH (
  'connector' = 'datagen',
  'rows-per-second' = '10'
)
 |
+--------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER TABLE DataGenSource RESET ('rows-per-second');
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE DataGenSource;
+----------------------------------------------------------------------------------------------------------------------+
|                                                                                                               result |
+----------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`DataGenSource` (
  `id` INT
)
WITH (
  'connector' = 'datagen'
)
 |
+----------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER TABLE IF EXISTS NoSuchTable SET ('rows-per-second' = '10');
[INFO] Execute statement succeeded.
!info

# ADD / MODIFY / DROP DISTRIBUTION (the page's four ADD forms on `uid`)
CREATE TABLE Users (uid BIGINT, name STRING) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users ADD DISTRIBUTION BY HASH(uid) INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users DROP DISTRIBUTION;
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users ADD DISTRIBUTION BY (uid) INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users DROP DISTRIBUTION;
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users ADD DISTRIBUTION BY (uid);
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users DROP DISTRIBUTION;
[INFO] Execute statement succeeded.
!info

ALTER TABLE Users ADD DISTRIBUTION INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

ALTER TABLE DataGenSource ADD DISTRIBUTION BY HASH(id) INTO 6 BUCKETS;
[INFO] Execute statement succeeded.
!info

ALTER TABLE DataGenSource ADD DISTRIBUTION INTO 2 BUCKETS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The base table has already defined the distribution `DISTRIBUTED BY HASH(`id`) INTO 6 BUCKETS`. You can modify it or drop it before adding a new one.
!error

ALTER TABLE DataGenSource MODIFY DISTRIBUTION INTO 3 BUCKETS;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE DataGenSource;
+-------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                          result |
+-------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`DataGenSource` (
  `id` INT
)
DISTRIBUTED INTO 3 BUCKETS
WITH (
  'connector' = 'datagen'
)
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER TABLE DataGenSource DROP DISTRIBUTION;
[INFO] Execute statement succeeded.
!info

ALTER TABLE DataGenSource DROP DISTRIBUTION;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The base table does not define any distribution.
!error

ALTER TABLE DataGenSource MODIFY DISTRIBUTION BY (id);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The base table does not define any distribution. You might want to add a new one.
!error

ALTER TABLE DataGenSource ADD DISTRIBUTION BY (nope) INTO 2 BUCKETS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid bucket key 'nope'. A bucket key for a distribution must reference a physical column in the schema. Available columns are: [id]
!error

# ALTER VIEW
CREATE VIEW MyView AS SELECT id FROM DataGenSource;
[INFO] Execute statement succeeded.
!info

ALTER VIEW MyView RENAME TO MyView2;
[INFO] Execute statement succeeded.
!info

ALTER VIEW MyView2 AS SELECT id, id + 1 AS next_id FROM DataGenSource;
[INFO] Execute statement succeeded.
!info

DESCRIBE MyView2;
+---------+------+------+-----+--------+-----------+
|    name | type | null | key | extras | watermark |
+---------+------+------+-----+--------+-----------+
|      id |  INT | TRUE |     |        |           |
| next_id |  INT | TRUE |     |        |           |
+---------+------+------+-----+--------+-----------+
2 rows in set
!ok

# ALTER DATABASE / CATALOG
CREATE DATABASE db1;
[INFO] Execute statement succeeded.
!info

ALTER DATABASE db1 SET ('k1' = 'v1', 'k2' = 'v2');
[INFO] Execute statement succeeded.
!info

CREATE CATALOG cat1 WITH ('type' = 'generic_in_memory');
[INFO] Execute statement succeeded.
!info

ALTER CATALOG cat1 SET ('default-database' = 'db');
[INFO] Execute statement succeeded.
!info

ALTER CATALOG cat1 RESET ('default-database');
[INFO] Execute statement succeeded.
!info

ALTER CATALOG cat1 COMMENT 'the first catalog';
[INFO] Execute statement succeeded.
!info

DESCRIBE CATALOG EXTENDED cat1;
+-----------+-------------------+
| info name |        info value |
+-----------+-------------------+
|      name |              cat1 |
|      type | generic_in_memory |
|   comment | the first catalog |
+-----------+-------------------+
3 rows in set
!ok

# ALTER FUNCTION (functions in full: tests/unit/streamsql/scripts/function*.q)
ALTER TEMPORARY SYSTEM FUNCTION IF EXISTS nofunc AS 'pkg.fn' LANGUAGE PYTHON;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Alter temporary system function is not supported
!error
