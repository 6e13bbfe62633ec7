# materialized_table.q - CREATE/SHOW CREATE/DROP MATERIALIZED TABLE in CONTINUOUS mode
# (the statements and outputs of Flink's own materialized_table.q, then SUSPEND / RESUME)

CREATE TABLE datagenSource (
  order_id BIGINT,
  order_number VARCHAR(20),
  user_id BIGINT,
  shop_id BIGINT,
  product_id BIGINT,
  status BIGINT,
  order_type BIGINT,
  order_created_at TIMESTAMP(3),
  payment_amount_cents BIGINT
)
WITH (
  'connector' = 'datagen',
  'rows-per-second' = '10'
);
[INFO] Execute statement succeeded.
!info

# without FRESHNESS: the default of CONTINUOUS mode (3 minutes)
CREATE MATERIALIZED TABLE users_shops
PARTITIONED BY (ds)
WITH(
   'connector' = 'blackhole'
)
REFRESH_MODE = CONTINUOUS
AS SELECT
  user_id,
  shop_id,
  ds,
  SUM (payment_amount_cents) AS payed_buy_fee_sum,
  SUM (1) AS pv
 FROM (
    SELECT user_id, shop_id, DATE_FORMAT(order_created_at, 'yyyy-MM-dd') AS ds, payment_amount_cents FROM datagenSource
 ) AS tmp
 GROUP BY user_id, shop_id, ds;
[INFO] Execute statement succeeded.
!info

SHOW CREATE MATERIALIZED TABLE users_shops;
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      result |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`users_shops` (
  `user_id` BIGINT,
  `shop_id` BIGINT,
  `ds` VARCHAR(2147483647),
  `payed_buy_fee_sum` BIGINT,
  `pv` INT NOT NULL
)
PARTITIONED BY (`ds`)
WITH (
  'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '3' MINUTE
REFRESH_MODE = CONTINUOUS
AS SELECT `tmp`.`user_id`, `tmp`.`shop_id`, `tmp`.`ds`, SUM(`tmp`.`payment_amount_cents`) AS `payed_buy_fee_sum`, SUM(1) AS `pv`
FROM (SELECT `datagenSource`.`user_id`, `datagenSource`.`shop_id`, DATE_FORMAT(`datagenSource`.`order_created_at`, 'yyyy-MM-dd') AS `ds`, `datagenSource`.`payment_amount_cents`
FROM `default_catalog`.`default_database`.`datagenSource` AS `datagenSource`) AS `tmp`
GROUP BY `tmp`.`user_id`, `tmp`.`shop_id`, `tmp`.`ds`
 |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

CREATE MATERIALIZED TABLE users_shops_explicit
PARTITIONED BY (ds)
WITH(
   'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '10' SECOND
REFRESH_MODE = CONTINUOUS
AS SELECT
  user_id,
  shop_id,
  ds,
  SUM (payment_amount_cents) AS payed_buy_fee_sum,
  SUM (1) AS pv
 FROM (
    SELECT user_id, shop_id, DATE_FORMAT(order_created_at, 'yyyy-MM-dd') AS ds, payment_amount_cents FROM datagenSource
 ) AS tmp
 GROUP BY user_id, shop_id, ds;
[INFO] Execute statement succeeded.
!info

SHOW CREATE MATERIALIZED TABLE users_shops_explicit;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`users_shops_explicit` (
  `user_id` BIGINT,
  `shop_id` BIGINT,
  `ds` VARCHAR(2147483647),
  `payed_buy_fee_sum` BIGINT,
  `pv` INT NOT NULL
)
PARTITIONED BY (`ds`)
WITH (
  'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '10' SECOND
REFRESH_MODE = CONTINUOUS
AS SELECT `tmp`.`user_id`, `tmp`.`shop_id`, `tmp`.`ds`, SUM(`tmp`.`payment_amount_cents`) AS `payed_buy_fee_sum`, SUM(1) AS `pv`
FROM (SELECT `datagenSource`.`user_id`, `datagenSource`.`shop_id`, DATE_FORMAT(`datagenSource`.`order_created_at`, 'yyyy-MM-dd') AS `ds`, `datagenSource`.`payment_amount_cents`
FROM `default_catalog`.`default_database`.`datagenSource` AS `datagenSource`) AS `tmp`
GROUP BY `tmp`.`user_id`, `tmp`.`shop_id`, `tmp`.`ds`
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# neither FRESHNESS nor REFRESH_MODE: CONTINUOUS with the default freshness
CREATE MATERIALIZED TABLE users_shops_continuous
WITH(
   'connector' = 'blackhole'
)
AS SELECT
  user_id,
  shop_id,
  SUM (payment_amount_cents) AS payed_buy_fee_sum,
  SUM (1) AS pv
 FROM datagenSource
 GROUP BY user_id, shop_id;
[INFO] Execute statement succeeded.
!info

SHOW CREATE MATERIALIZED TABLE users_shops_continuous;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`users_shops_continuous` (
  `user_id` BIGINT,
  `shop_id` BIGINT,
  `payed_buy_fee_sum` BIGINT,
  `pv` INT NOT NULL
)
WITH (
  'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '3' MINUTE
REFRESH_MODE = CONTINUOUS
AS SELECT `datagenSource`.`user_id`, `datagenSource`.`shop_id`, SUM(`datagenSource`.`payment_amount_cents`) AS `payed_buy_fee_sum`, SUM(1) AS `pv`
FROM `default_catalog`.`default_database`.`datagenSource` AS `datagenSource`
GROUP BY `datagenSource`.`user_id`, `datagenSource`.`shop_id`
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

SHOW MATERIALIZED TABLES;
+------------------------+
|     materialized table |
+------------------------+
|            users_shops |
| users_shops_continuous |
|   users_shops_explicit |
+------------------------+
3 rows in set
!ok

SHOW MATERIALIZED TABLES LIKE '%explicit';
+----------------------+
|   materialized table |
+----------------------+
| users_shops_explicit |
+----------------------+
1 row in set
!ok

SHOW TABLES;
+------------------------+
|             table name |
+------------------------+
|          datagenSource |
|            users_shops |
| users_shops_continuous |
|   users_shops_explicit |
+------------------------+
4 rows in set
!ok

DESCRIBE users_shops_continuous;
+-------------------+--------+-------+-----+--------+-----------+
|              name |   type |  null | key | extras | watermark |
+-------------------+--------+-------+-----+--------+-----------+
|           user_id | BIGINT |  TRUE |     |        |           |
|           shop_id | BIGINT |  TRUE |     |        |           |
| payed_buy_fee_sum | BIGINT |  TRUE |     |        |           |
|                pv |    INT | FALSE |     |        |           |
+-------------------+--------+-------+-----+--------+-----------+
4 rows in set
!ok

SHOW CREATE TABLE users_shops;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: SHOW CREATE TABLE is only supported for tables, but `default_catalog`.`default_database`.`users_shops` is a materialized table. Please use SHOW CREATE MATERIALIZED TABLE instead.
!error

SHOW CREATE MATERIALIZED TABLE datagenSource;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: SHOW CREATE MATERIALIZED TABLE is only supported for materialized tables, but `default_catalog`.`default_database`.`datagenSource` is a table. Please use SHOW CREATE TABLE instead.
!error

CREATE MATERIALIZED TABLE users_shops AS SELECT user_id FROM datagenSource;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.TableAlreadyExistException: Table (or view) default_database.users_shops already exists in Catalog default_catalog.
!error

# SUSPEND stops the refresh job with a savepoint: the savepoint directory must be set
ALTER MATERIALIZED TABLE users_shops_continuous SUSPEND;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Savepoint directory is not configured, can't stop job with savepoint.
!error

SET 'execution.checkpointing.savepoint-dir' = '$TMP/savepoints';
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE users_shops_continuous SUSPEND;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE users_shops_continuous RESUME;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE users_shops_continuous RESUME;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: Materialized table `default_catalog`.`default_database`.`users_shops_continuous` continuous refresh job has been resumed, jobId is 00000000000000000000000000000004.
!error

ALTER MATERIALIZED TABLE datagenSource SUSPEND;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table `default_catalog`.`default_database`.`datagenSource` is not a materialized table, does not support materialized table related operation.
!error

# the query may only gain nullable columns at its end
ALTER MATERIALIZED TABLE users_shops_continuous AS SELECT user_id, shop_id FROM datagenSource;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to modify query because drop column is unsupported. When modifying a query, you can only append new columns at the end of original schema. The original schema has 4 columns, but the newly derived schema from the query has 2 columns.
!error

ALTER MATERIALIZED TABLE users_shops_continuous
AS SELECT
  user_id,
  shop_id,
  SUM (payment_amount_cents) AS payed_buy_fee_sum,
  SUM (1) AS pv,
  MAX (status) AS max_status
 FROM datagenSource
 GROUP BY user_id, shop_id;
[INFO] Execute statement succeeded.
!info

DESCRIBE users_shops_continuous;
+-------------------+--------+-------+-----+--------+-----------+
|              name |   type |  null | key | extras | watermark |
+-------------------+--------+-------+-----+--------+-----------+
|           user_id | BIGINT |  TRUE |     |        |           |
|           shop_id | BIGINT |  TRUE |     |        |           |
| payed_buy_fee_sum | BIGINT |  TRUE |     |        |           |
|                pv |    INT | FALSE |     |        |           |
|        max_status | BIGINT |  TRUE |     |        |           |
+-------------------+--------+-------+-----+--------+-----------+
5 rows in set
!ok

DROP TABLE users_shops;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table with identifier 'default_catalog.default_database.users_shops' does not exist.
It is a materialized table: drop it with DROP MATERIALIZED TABLE.
!error

DROP MATERIALIZED TABLE users_shops;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE users_shops_explicit;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE users_shops_continuous;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE users_shops;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Materialized table with identifier `default_catalog`.`default_database`.`users_shops` does not exist.
!error

DROP MATERIALIZED TABLE IF EXISTS users_shops;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE datagenSource;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table `default_catalog`.`default_database`.`datagenSource` is not a materialized table, does not support materialized table related operation.
!error

DROP TABLE datagenSource;
[INFO] Execute statement succeeded.
!info
