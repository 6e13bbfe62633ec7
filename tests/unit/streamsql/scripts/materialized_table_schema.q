# materialized_table_schema.q - ALTER MATERIALIZED TABLE ADD / MODIFY / DROP (Flink 2.3's
# FLIP-550): only non-persisted columns (computed, metadata VIRTUAL) may be added or dropped,
# persisted ones come from the query; a persisted column may change its comment, position or
# type (to one its values cast to implicitly); constraints and the watermark like ALTER TABLE

SET 'execution.checkpointing.savepoint-dir' = '$TMP/sp';
[INFO] Execute statement succeeded.
!info

CREATE TABLE orders (user_id BIGINT, amount BIGINT, ds STRING) WITH ('connector' = 'filesystem', 'path' = '$TMP/orders', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

CREATE MATERIALIZED TABLE big WITH ('connector' = 'blackhole') FRESHNESS = INTERVAL '10' SECOND AS SELECT user_id, amount FROM orders WHERE amount > 1;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big ADD doubled AS amount * 2;
[INFO] Execute statement succeeded.
!info

# a physical column would have to come from the query
ALTER MATERIALIZED TABLE big ADD (note STRING);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
Invalid schema change. All persisted (physical and metadata) columns in the schema part need to be present in the query part.
However, physical column `note` could not be found in the query.
!error

ALTER MATERIALIZED TABLE big ADD (part STRING METADATA);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
Invalid schema change. All persisted (physical and metadata) columns in the schema part need to be present in the query part.
However, metadata persisted column `part` could not be found in the query.
!error

ALTER MATERIALIZED TABLE big ADD (label AS CAST(user_id AS STRING) FIRST, PRIMARY KEY (user_id) NOT ENFORCED);
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big ADD (ts AS TO_TIMESTAMP('2024-01-01 00:00:00'), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND);
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big ADD doubled AS amount * 4;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
Try to add a column `doubled` which already exists in the table.
!error

DESCRIBE big;
+---------+------------------------+-------+--------------+----------------------------------------+----------------------------+
|    name |                   type |  null |          key |                                 extras |                  watermark |
+---------+------------------------+-------+--------------+----------------------------------------+----------------------------+
|   label |                 STRING | FALSE |              |           AS CAST(`user_id` AS STRING) |                            |
| user_id |                 BIGINT | FALSE | PRI(user_id) |                                        |                            |
|  amount |                 BIGINT |  TRUE |              |                                        |                            |
| doubled |                 BIGINT |  TRUE |              |                        AS `amount` * 2 |                            |
|      ts | TIMESTAMP(3) *ROWTIME* |  TRUE |              | AS TO_TIMESTAMP('2024-01-01 00:00:00') | `ts` - INTERVAL '1' SECOND |
+---------+------------------------+-------+--------------+----------------------------------------+----------------------------+
5 rows in set
!ok

SHOW CREATE MATERIALIZED TABLE big;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`big` (
  `label` AS CAST(`user_id` AS STRING),
  `user_id` BIGINT NOT NULL,
  `amount` BIGINT,
  `doubled` AS `amount` * 2,
  `ts` AS TO_TIMESTAMP('2024-01-01 00:00:00'),
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND,
  CONSTRAINT `PK_user_id` PRIMARY KEY (`user_id`) NOT ENFORCED
)
WITH (
  'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '10' SECOND
REFRESH_MODE = CONTINUOUS
AS SELECT `orders`.`user_id`, `orders`.`amount`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
WHERE `orders`.`amount` > 1
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER MATERIALIZED TABLE big MODIFY amount DECIMAL(20, 0) COMMENT 'cents';
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big MODIFY amount INT;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
Column 'amount' with type DECIMAL(20, 0) can not be changed to type INT.
!error

ALTER MATERIALIZED TABLE big MODIFY doubled BIGINT;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
Invalid schema change. All persisted (physical and metadata) columns in the schema part need to be present in the query part.
However, physical column `doubled` could not be found in the query.
!error

ALTER MATERIALIZED TABLE big MODIFY doubled AS amount * 3 AFTER user_id;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big DROP amount;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
The column `amount` is referenced by computed column `doubled`.
!error

ALTER MATERIALIZED TABLE big DROP (label, doubled);
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big DROP user_id;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
The column `user_id` is used as the primary key.
!error

ALTER MATERIALIZED TABLE big DROP WATERMARK;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big DROP PRIMARY KEY;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE big DROP PRIMARY KEY;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Failed to execute ALTER MATERIALIZED TABLE statement.
The base table does not define any primary key.
!error

ALTER MATERIALIZED TABLE big ADD DISTRIBUTION BY HASH(user_id) INTO 4 BUCKETS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ALTER MATERIALIZED TABLE ... ADD / MODIFY / DROP DISTRIBUTION is not supported: the refresh job writes the table, and streamsql's connectors write no buckets.
!error

DESCRIBE big;
+---------+----------------+-------+-----+----------------------------------------+-----------+---------+
|    name |           type |  null | key |                                 extras | watermark | comment |
+---------+----------------+-------+-----+----------------------------------------+-----------+---------+
| user_id |         BIGINT | FALSE |     |                                        |           |         |
|  amount | DECIMAL(20, 0) |  TRUE |     |                                        |           |   cents |
|      ts |   TIMESTAMP(3) |  TRUE |     | AS TO_TIMESTAMP('2024-01-01 00:00:00') |           |         |
+---------+----------------+-------+-----+----------------------------------------+-----------+---------+
3 rows in set
!ok

# a new query keeps the non-persisted columns (the running refresh job restarts on it)
CREATE TABLE gen (user_id BIGINT, amount BIGINT, ds STRING) WITH ('connector' = 'datagen', 'rows-per-second' = '5');
[INFO] Execute statement succeeded.
!info

CREATE MATERIALIZED TABLE small WITH ('connector' = 'blackhole') FRESHNESS = INTERVAL '10' SECOND AS SELECT user_id, amount FROM gen;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE small ADD half AS amount / 2;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE small AS SELECT user_id, amount, ds FROM gen;
[INFO] Execute statement succeeded.
!info

DESCRIBE small;
+---------+--------+------+-----+-----------------+-----------+
|    name |   type | null | key |          extras | watermark |
+---------+--------+------+-----+-----------------+-----------+
| user_id | BIGINT | TRUE |     |                 |           |
|  amount | BIGINT | TRUE |     |                 |           |
|      ds | STRING | TRUE |     |                 |           |
|    half | BIGINT | TRUE |     | AS `amount` / 2 |           |
+---------+--------+------+-----+-----------------+-----------+
4 rows in set
!ok

DROP MATERIALIZED TABLE small;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE big;
[INFO] Execute statement succeeded.
!info
