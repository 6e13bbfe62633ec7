# catalog_qualified.q - objects addressed across catalogs and databases

CREATE CATALOG c1 WITH ('type' = 'generic_in_memory');
[INFO] Execute statement succeeded.
!info

CREATE DATABASE c1.db1 COMMENT 'first';
[INFO] Execute statement succeeded.
!info

CREATE TABLE c1.db1.t1 (a INT, b STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
[INFO] Execute statement succeeded.
!info

CREATE VIEW c1.db1.v1 AS SELECT a FROM c1.db1.t1 WHERE a > 0;
[INFO] Execute statement succeeded.
!info

SHOW TABLES FROM c1.db1;
+------------+
| table name |
+------------+
|         t1 |
|         v1 |
+------------+
2 rows in set
!ok

SHOW VIEWS IN c1.db1;
+-----------+
| view name |
+-----------+
|        v1 |
+-----------+
1 row in set
!ok

SHOW TABLES;
Empty set
!ok

SHOW DATABASES FROM c1;
+---------------+
| database name |
+---------------+
|           db1 |
|       default |
+---------------+
2 rows in set
!ok

SHOW CREATE VIEW c1.db1.v1;
+-----------------------------------------------------------------------------------------------------------+
|                                                                                                    result |
+-----------------------------------------------------------------------------------------------------------+
| CREATE VIEW `c1`.`db1`.`v1` (
  `a`
)
AS SELECT `t1`.`a`
FROM `c1`.`db1`.`t1` AS `t1`
WHERE `t1`.`a` > 0
 |
+-----------------------------------------------------------------------------------------------------------+
1 row in set
!ok

USE c1.db1;
[INFO] Execute statement succeeded.
!info

USE CATALOG c1;
[INFO] Execute statement succeeded.
!info

SHOW CURRENT DATABASE;
+-----------------------+
| current database name |
+-----------------------+
|               default |
+-----------------------+
1 row in set
!ok

USE db1;
[INFO] Execute statement succeeded.
!info

SHOW TABLES LIKE 't%';
+------------+
| table name |
+------------+
|         t1 |
+------------+
1 row in set
!ok

DESCRIBE v1;
+------+------+------+-----+--------+-----------+
| name | type | null | key | extras | watermark |
+------+------+------+-----+--------+-----------+
|    a |  INT | TRUE |     |        |           |
+------+------+------+-----+--------+-----------+
1 row in set
!ok

# a view keeps its tables qualified: it means the same from another namespace
CREATE VIEW default_catalog.default_database.far AS SELECT b FROM t1;
[INFO] Execute statement succeeded.
!info

SHOW CREATE VIEW default_catalog.default_database.far;
+-------------------------------------------------------------------------------------------------------------------+
|                                                                                                            result |
+-------------------------------------------------------------------------------------------------------------------+
| CREATE VIEW `default_catalog`.`default_database`.`far` (
  `b`
)
AS SELECT `t1`.`b`
FROM `c1`.`db1`.`t1` AS `t1`
 |
+-------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER TABLE t1 RENAME TO t2;
[INFO] Execute statement succeeded.
!info

ALTER TABLE t2 RENAME TO default_catalog.default_database.t2;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The catalog name of the new table name must be the same as the old one
!error

DROP DATABASE db1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Cannot drop a database which is currently in use.
!error

USE CATALOG default_catalog;
[INFO] Execute statement succeeded.
!info

DROP DATABASE c1.db1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException: Database db1 in catalog c1 is not empty.
!error

DROP DATABASE c1.db1 CASCADE;
[INFO] Execute statement succeeded.
!info

SHOW DATABASES FROM c1;
+---------------+
| database name |
+---------------+
|       default |
+---------------+
1 row in set
!ok

DROP CATALOG c1;
[INFO] Execute statement succeeded.
!info

SHOW CATALOGS;
+-----------------+
|    catalog name |
+-----------------+
| default_catalog |
+-----------------+
1 row in set
!ok
