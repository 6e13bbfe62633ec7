# utility.q - the examples of Flink 2.x's SQL reference, utility statement pages: SHOW,
# USE, LOAD / UNLOAD MODULE, SET / RESET, JAR, CALL (docs/sql/reference/utility/*.md).
# The SHOW TABLES / COLUMNS / CREATE examples run on the tables the page assumes; SHOW
# CREATE CATALOG prints Flink's ShowCreateUtil layout (`WITH (` on its own line; the page's
# example puts it after the name).

CREATE CATALOG catalog1 WITH ('type' = 'generic_in_memory');
[INFO] Execute statement succeeded.
!info

CREATE DATABASE catalog1.db1;
[INFO] Execute statement succeeded.
!info

CREATE TABLE catalog1.db1.person (id INT) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

CREATE TABLE catalog1.db1.dim (id INT) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

CREATE TABLE items (id INT) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

CREATE TABLE orders (
  order_id BIGINT NOT NULL comment 'this is the primary key, named ''order_id''.',
  product VARCHAR(32),
  amount INT,
  ts TIMESTAMP(3) comment 'notice: watermark, named ''ts''.',
  ptime AS PROCTIME() comment 'notice: computed column, named ''ptime''.',
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  CONSTRAINT `PK_order_id` PRIMARY KEY (order_id) NOT ENFORCED
) WITH (
  'connector' = 'datagen'
);
[INFO] Execute statement succeeded.
!info

# SHOW CATALOGS / DATABASES / CURRENT ...
SHOW CATALOGS;
+-----------------+
|    catalog name |
+-----------------+
|        catalog1 |
| default_catalog |
+-----------------+
2 rows in set
!ok

SHOW CATALOGS LIKE 'cat%';
+--------------+
| catalog name |
+--------------+
|     catalog1 |
+--------------+
1 row in set
!ok

SHOW CURRENT CATALOG;
+----------------------+
| current catalog name |
+----------------------+
|      default_catalog |
+----------------------+
1 row in set
!ok

SHOW DATABASES FROM catalog1 LIKE 'db%';
+---------------+
| database name |
+---------------+
|           db1 |
+---------------+
1 row in set
!ok

SHOW CURRENT DATABASE;
+-----------------------+
| current database name |
+-----------------------+
|      default_database |
+-----------------------+
1 row in set
!ok

CREATE CATALOG cat2 WITH (
    'type'='generic_in_memory',
    'default-database'='db'
);
[INFO] Execute statement succeeded.
!info

show create catalog cat2;
+---------------------------------------------------------------------------------------------+
|                                                                                      result |
+---------------------------------------------------------------------------------------------+
| CREATE CATALOG `cat2`
WITH (
  'default-database' = 'db',
  'type' = 'generic_in_memory'
)
 |
+---------------------------------------------------------------------------------------------+
1 row in set
!ok

# SHOW TABLES (the page's examples; `db1` alone is a database of the current catalog)
show tables from catalog1.db1;
+------------+
| table name |
+------------+
|        dim |
|     person |
+------------+
2 rows in set
!ok

show tables in catalog1.db1 like '%n';
+------------+
| table name |
+------------+
|     person |
+------------+
1 row in set
!ok

show tables from catalog1.db1 not like '%n';
+------------+
| table name |
+------------+
|        dim |
+------------+
1 row in set
!ok

show tables;
+------------+
| table name |
+------------+
|      items |
|     orders |
+------------+
2 rows in set
!ok

USE CATALOG catalog1;
[INFO] Execute statement succeeded.
!info

show tables from db1;
+------------+
| table name |
+------------+
|        dim |
|     person |
+------------+
2 rows in set
!ok

show tables in db1 like '%n';
+------------+
| table name |
+------------+
|     person |
+------------+
1 row in set
!ok

USE CATALOG default_catalog;
[INFO] Execute statement succeeded.
!info

# SHOW CREATE TABLE: the page's output, in Flink 2.x's layout
show create table orders;
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                                                             result |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`orders` (
  `order_id` BIGINT NOT NULL COMMENT 'this is the primary key, named ''order_id''.',
  `product` VARCHAR(32),
  `amount` INT,
  `ts` TIMESTAMP(3) COMMENT 'notice: watermark, named ''ts''.',
  `ptime` AS PROCTIME() COMMENT 'notice: computed column, named ''ptime''.',
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_order_id` PRIMARY KEY (`order_id`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen'
)
 |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# SHOW COLUMNS
show columns from orders;
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
|     name |                        type |  null |           key |        extras |                  watermark |                                    comment |
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
| order_id |                      BIGINT | FALSE | PRI(order_id) |               |                            | this is the primary key, named 'order_id'. |
|  product |                 VARCHAR(32) |  TRUE |               |               |                            |                                            |
|   amount |                         INT |  TRUE |               |               |                            |                                            |
|       ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |               |               | `ts` - INTERVAL '1' SECOND |             notice: watermark, named 'ts'. |
|    ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |               | AS PROCTIME() |                            |    notice: computed column, named 'ptime'. |
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
5 rows in set
!ok

show columns from orders like '%r';
Empty set
!ok

show columns from orders not like '%_r';
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
|     name |                        type |  null |           key |        extras |                  watermark |                                    comment |
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
| order_id |                      BIGINT | FALSE | PRI(order_id) |               |                            | this is the primary key, named 'order_id'. |
|  product |                 VARCHAR(32) |  TRUE |               |               |                            |                                            |
|   amount |                         INT |  TRUE |               |               |                            |                                            |
|       ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |               |               | `ts` - INTERVAL '1' SECOND |             notice: watermark, named 'ts'. |
|    ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |               | AS PROCTIME() |                            |    notice: computed column, named 'ptime'. |
+----------+-----------------------------+-------+---------------+---------------+----------------------------+--------------------------------------------+
5 rows in set
!ok

# SHOW VIEWS / FUNCTIONS / MODULES / JARS / JOBS / PROCEDURES
CREATE VIEW my_view AS SELECT product, amount FROM orders;
[INFO] Execute statement succeeded.
!info

SHOW VIEWS;
+-----------+
| view name |
+-----------+
|   my_view |
+-----------+
1 row in set
!ok

SHOW CREATE VIEW my_view;
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                 result |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE VIEW `default_catalog`.`default_database`.`my_view` (
  `product`,
  `amount`
)
AS SELECT `orders`.`product`, `orders`.`amount`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
 |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

SHOW FUNCTIONS LIKE 'sha2%';
+---------------+
| function name |
+---------------+
|          sha2 |
|        sha224 |
|        sha256 |
+---------------+
3 rows in set
!ok

SHOW USER FUNCTIONS;
Empty set
!ok

SHOW MODULES;
+-------------+
| module name |
+-------------+
|        core |
+-------------+
1 row in set
!ok

SHOW FULL MODULES;
+-------------+------+
| module name | used |
+-------------+------+
|        core | TRUE |
+-------------+------+
1 row in set
!ok

SHOW JARS;
Empty set
!ok

SHOW PROCEDURES;
Empty set
!ok

# USE (catalog, database, modules)
USE CATALOG catalog1;
[INFO] Execute statement succeeded.
!info

USE db1;
[INFO] Execute statement succeeded.
!info

SHOW CURRENT DATABASE;
+-----------------------+
| current database name |
+-----------------------+
|                   db1 |
+-----------------------+
1 row in set
!ok

USE default_catalog.default_database;
[INFO] Execute statement succeeded.
!info

USE MODULES core;
[INFO] Execute statement succeeded.
!info

# LOAD / UNLOAD MODULE: `core` is the only module (the Hive module is Java)
LOAD MODULE hive WITH ('hive-version' = '3.1.3');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not find any factory for identifier 'hive' that implements 'org.apache.flink.table.factories.ModuleFactory' in the classpath.

Available factory identifiers are:

core
!error

UNLOAD MODULE core;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: UNLOAD MODULE core is not supported: streamsql's built-in functions cannot be switched off
!error

# SET / RESET
SET 'table.local-time-zone' = 'Europe/Berlin';
[INFO] Execute statement succeeded.
!info

SET;
+------------------------+---------------+
|                    key |         value |
+------------------------+---------------+
| execution.runtime-mode |     streaming |
|  table.local-time-zone | Europe/Berlin |
+------------------------+---------------+
2 rows in set
!ok

RESET 'table.local-time-zone';
[INFO] Execute statement succeeded.
!info

RESET;
[INFO] Execute statement succeeded.
!info

# JAR statements: a JAR is Java code, and there is no JVM
ADD JAR '/path/hello.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ADD JAR is not supported: a JAR holds Java code, and streamsql runs Flink SQL without a JVM
Write user-defined functions in Python instead (CREATE FUNCTION f AS 'pkg.module.fn' LANGUAGE PYTHON, docs/udf.md); connectors and formats are built in (docs/connectors/).
!error

REMOVE JAR '/path/hello.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: REMOVE JAR is not supported: a JAR holds Java code, and streamsql runs Flink SQL without a JVM
Write user-defined functions in Python instead (CREATE FUNCTION f AS 'pkg.module.fn' LANGUAGE PYTHON, docs/udf.md); connectors and formats are built in (docs/connectors/).
!error

# CALL: no catalog here has procedures
CALL `catalog1`.`db1`.`my_proc`(1);
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature my_proc(<NUMERIC>)
At line 1, column 6:
  CALL `catalog1`.`db1`.`my_proc`(1)
       ^
streamsql's catalogs have no procedures (SHOW PROCEDURES lists none).
!error
