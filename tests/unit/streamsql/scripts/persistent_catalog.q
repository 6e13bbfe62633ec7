# persistent_catalog.q - a catalog in a SQLite file (see test_persistent_catalog.py for restarts)

create catalog shop with ('type' = 'sqlite', 'path' = '$TMP/shop.db', 'default-database' = 'main');
[INFO] Execute statement succeeded.
!info

describe catalog shop;
+-----------+------------+
| info name | info value |
+-----------+------------+
|      name |       shop |
|      type |     sqlite |
|   comment |            |
+-----------+------------+
3 rows in set
!ok

use catalog shop;
[INFO] Execute statement succeeded.
!info

show databases;
+---------------+
| database name |
+---------------+
|          main |
+---------------+
1 row in set
!ok

create database sales comment 'what we sold';
[INFO] Execute statement succeeded.
!info

create table sales.orders (id int, amount double, primary key (id) not enforced) with ('connector' = 'datagen', 'number-of-rows' = '5');
[INFO] Execute statement succeeded.
!info

create view sales.big as select id from sales.orders where amount > 0;
[INFO] Execute statement succeeded.
!info

create function sales.shout as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

show tables from shop.sales;
+------------+
| table name |
+------------+
|        big |
|     orders |
+------------+
2 rows in set
!ok

use sales;
[INFO] Execute statement succeeded.
!info

show user functions;
+---------------+
| function name |
+---------------+
|         shout |
+---------------+
1 row in set
!ok

show create table orders;
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                              result |
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `shop`.`sales`.`orders` (
  `id` INT NOT NULL,
  `amount` DOUBLE,
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '5'
)
 |
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

create catalog broken with ('type' = 'sqlite');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: One or more required options are missing.

Missing required options are:

path
!error

create catalog broken with ('type' = 'sqlite', 'path' = '$TMP/b.db', 'colour' = 'red');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Unsupported options found for 'sqlite'.

Unsupported options:

colour

Supported options:

default-database
path
property-version
type
!error
