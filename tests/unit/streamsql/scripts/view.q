# view.q - CREATE/DROP/ALTER/DESCRIBE/SHOW CREATE VIEW

CREATE TABLE orders (
 `user` BIGINT NOT NULL,
 product VARCHAR(32),
 amount INT,
 ts TIMESTAMP(3),
 PRIMARY KEY(`user`) NOT ENFORCED,
 WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) with (
 'connector' = 'datagen'
);
[INFO] Execute statement succeeded.
!info

create temporary view v1 as select * from orders;
[INFO] Execute statement succeeded.
!info

create temporary view v1 as select * from orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Temporary table '`default_catalog`.`default_database`.`v1`' already exists
!error

create temporary view if not exists v1 as select * from orders;
[INFO] Execute statement succeeded.
!info

create temporary view v2 as select `user`, amount from v1 where amount > 10;
[INFO] Execute statement succeeded.
!info

select * from v1 /*+ OPTIONS('number-of-rows' = '1') */;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: View '`default_catalog`.`default_database`.`v1`' cannot be enriched with new options. Hints can only be applied to tables.
At line 1, column 15:
  select * from v1 /*+ OPTIONS('number-of-rows' = '1') */
                ^
!error

show create view v1;
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                        result |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TEMPORARY VIEW `default_catalog`.`default_database`.`v1` (
  `user`,
  `product`,
  `amount`,
  `ts`
)
AS SELECT `orders`.`user`, `orders`.`product`, `orders`.`amount`, `orders`.`ts`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
 |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

show create table v1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: SHOW CREATE TABLE is only supported for tables, but `default_catalog`.`default_database`.`v1` is a view. Please use SHOW CREATE VIEW instead.
!error

# a permanent view with the name of a temporary one
create view v1 as select `user`, product from orders;
[INFO] Execute statement succeeded.
!info

create view v1 as select `user`, product from orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.TableAlreadyExistException: Table (or view) default_database.v1 already exists in Catalog default_catalog.
!error

show views;
+-----------+
| view name |
+-----------+
|        v1 |
|        v2 |
+-----------+
2 rows in set
!ok

describe v1;
+---------+------------------------+-------+-----+--------+-----------+
|    name |                   type |  null | key | extras | watermark |
+---------+------------------------+-------+-----+--------+-----------+
|    user |                 BIGINT | FALSE |     |        |           |
| product |            VARCHAR(32) |  TRUE |     |        |           |
|  amount |                    INT |  TRUE |     |        |           |
|      ts | TIMESTAMP(3) *ROWTIME* |  TRUE |     |        |           |
+---------+------------------------+-------+-----+--------+-----------+
4 rows in set
!ok

show columns from v2;
+--------+--------+-------+-----+--------+-----------+
|   name |   type |  null | key | extras | watermark |
+--------+--------+-------+-----+--------+-----------+
|   user | BIGINT | FALSE |     |        |           |
| amount |    INT |  TRUE |     |        |           |
+--------+--------+-------+-----+--------+-----------+
2 rows in set
!ok

drop view v1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Temporary view with identifier '`default_catalog`.`default_database`.`v1`' exists. Drop it first before removing the permanent view.
!error

drop temporary view v1;
[INFO] Execute statement succeeded.
!info

describe v1;
+---------+-------------+-------+-----+--------+-----------+
|    name |        type |  null | key | extras | watermark |
+---------+-------------+-------+-----+--------+-----------+
|    user |      BIGINT | FALSE |     |        |           |
| product | VARCHAR(32) |  TRUE |     |        |           |
+---------+-------------+-------+-----+--------+-----------+
2 rows in set
!ok

create view big (who, how_much) comment 'large orders' as select `user`, amount from orders where amount > 100;
[INFO] Execute statement succeeded.
!info

show create view big;
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                             result |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE VIEW `default_catalog`.`default_database`.`big` (
  `who`,
  `how_much`
)
COMMENT 'large orders'
AS SELECT `orders`.`user`, `orders`.`amount`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
WHERE `orders`.`amount` > 100
 |
+----------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

alter view big rename to huge;
[INFO] Execute statement succeeded.
!info

alter view huge as select `user` from orders;
[INFO] Execute statement succeeded.
!info

show create view huge;
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                result |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE VIEW `default_catalog`.`default_database`.`huge` (
  `user`
)
COMMENT 'large orders'
AS SELECT `orders`.`user`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
 |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

drop view huge;
[INFO] Execute statement succeeded.
!info

drop view huge;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: View with identifier 'default_catalog.default_database.huge' does not exist.
!error

drop view if exists huge;
[INFO] Execute statement succeeded.
!info

drop view v1;
[INFO] Execute statement succeeded.
!info

show tables;
+------------+
| table name |
+------------+
|     orders |
|         v2 |
+------------+
2 rows in set
!ok
