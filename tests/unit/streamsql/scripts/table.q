# table.q - CREATE/DROP/ALTER/DESCRIBE/SHOW CREATE TABLE, SHOW COLUMNS

drop table no_such_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table with identifier 'default_catalog.default_database.no_such_table' does not exist.
!error

describe no_such_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Tables or views with the identifier 'default_catalog.default_database.no_such_table' doesn't exist.
!error

alter table no_such_table rename to t2;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table `default_catalog`.`default_database`.`no_such_table` doesn't exist or is a temporary table.
!error

alter table if exists no_such_table rename to t2;
[INFO] Execute statement succeeded.
!info

CREATE TABLE IF NOT EXISTS orders (
 `user` BIGINT NOT NULL,
 product VARCHAR(32),
 amount INT,
 ts TIMESTAMP(3),
 ptime AS PROCTIME(),
 PRIMARY KEY(`user`) NOT ENFORCED,
 WATERMARK FOR ts AS ts - INTERVAL '1' SECONDS
) with (
 'connector' = 'datagen'
);
[INFO] Execute statement succeeded.
!info

show tables;
+------------+
| table name |
+------------+
|     orders |
+------------+
1 row in set
!ok

show create table orders;
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                           result |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`orders` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `ts` TIMESTAMP(3),
  `ptime` AS PROCTIME(),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen'
)
 |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

describe orders;
+---------+-----------------------------+-------+-----------+---------------+----------------------------+
|    name |                        type |  null |       key |        extras |                  watermark |
+---------+-----------------------------+-------+-----------+---------------+----------------------------+
|    user |                      BIGINT | FALSE | PRI(user) |               |                            |
| product |                 VARCHAR(32) |  TRUE |           |               |                            |
|  amount |                         INT |  TRUE |           |               |                            |
|      ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |           |               | `ts` - INTERVAL '1' SECOND |
|   ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |           | AS PROCTIME() |                            |
+---------+-----------------------------+-------+-----------+---------------+----------------------------+
5 rows in set
!ok

show columns from orders like '%u%';
+---------+-------------+-------+-----------+--------+-----------+
|    name |        type |  null |       key | extras | watermark |
+---------+-------------+-------+-----------+--------+-----------+
|    user |      BIGINT | FALSE | PRI(user) |        |           |
| product | VARCHAR(32) |  TRUE |           |        |           |
|  amount |         INT |  TRUE |           |        |           |
+---------+-------------+-------+-----------+--------+-----------+
3 rows in set
!ok

show columns in orders not like '%u%';
+-------+-----------------------------+-------+-----+---------------+----------------------------+
|  name |                        type |  null | key |        extras |                  watermark |
+-------+-----------------------------+-------+-----+---------------+----------------------------+
|    ts |      TIMESTAMP(3) *ROWTIME* |  TRUE |     |               | `ts` - INTERVAL '1' SECOND |
| ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |     | AS PROCTIME() |                            |
+-------+-----------------------------+-------+-----+---------------+----------------------------+
2 rows in set
!ok

show columns from orders like 'use_';
+------+--------+-------+-----------+--------+-----------+
| name |   type |  null |       key | extras | watermark |
+------+--------+-------+-----------+--------+-----------+
| user | BIGINT | FALSE | PRI(user) |        |           |
+------+--------+-------+-----------+--------+-----------+
1 row in set
!ok

show create view orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: SHOW CREATE VIEW is only supported for views, but `default_catalog`.`default_database`.`orders` is a table. Please use SHOW CREATE TABLE instead.
!error

# ALTER TABLE: rename, options
alter table orders rename to orders2;
[INFO] Execute statement succeeded.
!info

alter table orders2 set ('number-of-rows' = '10', 'rows-per-second' = '5');
[INFO] Execute statement succeeded.
!info

alter table orders2 reset ('rows-per-second');
[INFO] Execute statement succeeded.
!info

alter table orders2 reset ();
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: ALTER TABLE RESET does not support empty key
!error

show create table orders2;
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                       result |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`orders2` (
  `user` BIGINT NOT NULL,
  `product` VARCHAR(32),
  `amount` INT,
  `ts` TIMESTAMP(3),
  `ptime` AS PROCTIME(),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user` PRIMARY KEY (`user`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10'
)
 |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# ALTER TABLE: columns
alter table orders2 rename amount to quantity;
[INFO] Execute statement succeeded.
!info

alter table orders2 add product string first;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
Try to add a column `product` which already exists in the table.
!error

alter table orders2 add region string after nowhere;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
Referenced column `nowhere` by 'AFTER' does not exist in the table.
!error

alter table orders2 add (region string not null after `user`, label as upper(product) after product, id bigint first);
[INFO] Execute statement succeeded.
!info

alter table orders2 modify (watermark for ts as ts - interval '1' minute, ts timestamp(3) after id);
[INFO] Execute statement succeeded.
!info

alter table orders2 modify constraint pk_id primary key (id) not enforced;
[INFO] Execute statement succeeded.
!info

show create table orders2;
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                     result |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`orders2` (
  `id` BIGINT NOT NULL,
  `ts` TIMESTAMP(3),
  `user` BIGINT NOT NULL,
  `region` VARCHAR(2147483647) NOT NULL,
  `product` VARCHAR(32),
  `label` AS UPPER(`product`),
  `quantity` INT,
  `ptime` AS PROCTIME(),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' MINUTE,
  CONSTRAINT `pk_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '10'
)
 |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

alter table orders2 drop (quantity, label);
[INFO] Execute statement succeeded.
!info

alter table orders2 drop id;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The column `id` is used as the primary key.
!error

alter table orders2 drop primary key;
[INFO] Execute statement succeeded.
!info

alter table orders2 drop watermark;
[INFO] Execute statement succeeded.
!info

alter table orders2 drop watermark;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER TABLE statement.
The base table does not define any watermark strategy.
!error

describe orders2;
+---------+-----------------------------+-------+-----+---------------+-----------+
|    name |                        type |  null | key |        extras | watermark |
+---------+-----------------------------+-------+-----+---------------+-----------+
|      id |                      BIGINT | FALSE |     |               |           |
|      ts |                TIMESTAMP(3) |  TRUE |     |               |           |
|    user |                      BIGINT | FALSE |     |               |           |
|  region |                      STRING | FALSE |     |               |           |
| product |                 VARCHAR(32) |  TRUE |     |               |           |
|   ptime | TIMESTAMP_LTZ(3) *PROCTIME* | FALSE |     | AS PROCTIME() |           |
+---------+-----------------------------+-------+-----+---------------+-----------+
6 rows in set
!ok

# comments show in DESCRIBE and SHOW CREATE TABLE
create table notes (
  id int not null comment 'the ''id''',
  body string,
  primary key (id) not enforced
) comment 'some notes' with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

describe notes;
+------+--------+-------+---------+--------+-----------+----------+
| name |   type |  null |     key | extras | watermark |  comment |
+------+--------+-------+---------+--------+-----------+----------+
|   id |    INT | FALSE | PRI(id) |        |           | the 'id' |
| body | STRING |  TRUE |         |        |           |          |
+------+--------+-------+---------+--------+-----------+----------+
2 rows in set
!ok

show create table notes;
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                              result |
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`notes` (
  `id` INT NOT NULL COMMENT 'the ''id''',
  `body` VARCHAR(2147483647),
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
COMMENT 'some notes'
WITH (
  'connector' = 'datagen'
)
 |
+-----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# temporary tables shadow permanent ones
create temporary table notes (x int) with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

describe notes;
+------+------+------+-----+--------+-----------+
| name | type | null | key | extras | watermark |
+------+------+------+-----+--------+-----------+
|    x |  INT | TRUE |     |        |           |
+------+------+------+-----+--------+-----------+
1 row in set
!ok

show create table notes;
+-----------------------------------------------------------------------------------------------------------------------+
|                                                                                                                result |
+-----------------------------------------------------------------------------------------------------------------------+
| CREATE TEMPORARY TABLE `default_catalog`.`default_database`.`notes` (
  `x` INT
)
WITH (
  'connector' = 'datagen'
)
 |
+-----------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

drop table notes;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Temporary table with identifier '`default_catalog`.`default_database`.`notes`' exists. Drop it first before removing the permanent table.
!error

drop temporary table notes;
[INFO] Execute statement succeeded.
!info

drop table notes;
[INFO] Execute statement succeeded.
!info

drop temporary table notes;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Temporary table with identifier 'default_catalog.default_database.notes' does not exist.
!error

drop table if exists notes;
[INFO] Execute statement succeeded.
!info

# keywords as names
create table `mod` (`table` string, `database` string) with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

describe `mod`;
+----------+--------+------+-----+--------+-----------+
|     name |   type | null | key | extras | watermark |
+----------+--------+------+-----+--------+-----------+
|    table | STRING | TRUE |     |        |           |
| database | STRING | TRUE |     |        |           |
+----------+--------+------+-----+--------+-----------+
2 rows in set
!ok

drop table `mod`;
[INFO] Execute statement succeeded.
!info

show tables;
+------------+
| table name |
+------------+
|    orders2 |
+------------+
1 row in set
!ok
