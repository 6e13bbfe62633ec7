# materialized_table_full.q - FULL refresh mode: the workflow scheduler, REFRESH [PARTITION],
# SUSPEND / RESUME of the refresh workflow, OR ALTER, SET / RESET, freshness validation

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

CREATE TABLE orders (user_id BIGINT, amount BIGINT, ds STRING)
WITH ('connector' = 'filesystem', 'path' = '$TMP/orders', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO orders VALUES (1, 5, '2024-06-01'), (1, 7, '2024-06-01'), (2, 1, '2024-06-02');
[INFO] Complete execution of the SQL update statement.
!info

# a freshness at or above materialized-table.refresh-mode.freshness-threshold (30 min) means FULL mode,
# which needs a workflow scheduler, as in Flink's SQL gateway
CREATE MATERIALIZED TABLE daily_totals
PARTITIONED BY (ds)
WITH ('connector' = 'filesystem', 'path' = '$TMP/daily_totals', 'format' = 'csv')
FRESHNESS = INTERVAL '1' DAY
AS SELECT ds, user_id, SUM(amount) AS total FROM orders GROUP BY ds, user_id;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: The workflow scheduler must be configured when creating materialized table in full refresh mode.
!error

SET 'workflow-scheduler.type' = 'embedded';
[INFO] Execute statement succeeded.
!info

CREATE MATERIALIZED TABLE daily_totals
PARTITIONED BY (ds)
WITH ('connector' = 'filesystem', 'path' = '$TMP/daily_totals', 'format' = 'csv')
FRESHNESS = INTERVAL '1' DAY
AS SELECT ds, user_id, SUM(amount) AS total FROM orders GROUP BY ds, user_id;
[INFO] Execute statement succeeded.
!info

# nothing is refreshed before the first scheduled run; REFRESH runs one batch job now
ALTER MATERIALIZED TABLE daily_totals REFRESH;
+----------------------------------+--------------------------+
|                           job_id |             cluster_info |
+----------------------------------+--------------------------+
| 00000000000000000000000000000002 | {execution.target=local} |
+----------------------------------+--------------------------+
1 row in set
!ok

SELECT * FROM daily_totals ORDER BY ds, user_id;
+------------+---------+-------+
|         ds | user_id | total |
+------------+---------+-------+
| 2024-06-01 |       1 |    12 |
| 2024-06-02 |       2 |     1 |
+------------+---------+-------+
2 rows in set
!ok

SHOW PARTITIONS daily_totals;
+----------------+
| partition name |
+----------------+
|  ds=2024-06-01 |
|  ds=2024-06-02 |
+----------------+
2 rows in set
!ok

SHOW PARTITIONS daily_totals PARTITION (ds = '2024-06-02');
+----------------+
| partition name |
+----------------+
|  ds=2024-06-02 |
+----------------+
1 row in set
!ok

INSERT INTO orders VALUES (3, 10, '2024-06-02');
[INFO] Complete execution of the SQL update statement.
!info

# refresh one partition: only its rows are recomputed
ALTER MATERIALIZED TABLE daily_totals REFRESH PARTITION (ds = '2024-06-02');
+----------------------------------+--------------------------+
|                           job_id |             cluster_info |
+----------------------------------+--------------------------+
| 00000000000000000000000000000005 | {execution.target=local} |
+----------------------------------+--------------------------+
1 row in set
!ok

SELECT * FROM daily_totals ORDER BY ds, user_id;
+------------+---------+-------+
|         ds | user_id | total |
+------------+---------+-------+
| 2024-06-01 |       1 |    12 |
| 2024-06-02 |       2 |     1 |
| 2024-06-02 |       3 |    10 |
+------------+---------+-------+
3 rows in set
!ok

ALTER MATERIALIZED TABLE daily_totals REFRESH PARTITION (day = '2024-06-02');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The partition spec contains unknown partition keys:

day

All known partition keys are:

ds
!error

ALTER MATERIALIZED TABLE daily_totals SUSPEND;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE daily_totals SUSPEND;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: Materialized table `default_catalog`.`default_database`.`daily_totals` refresh workflow has been suspended.
!error

ALTER MATERIALIZED TABLE daily_totals RESUME;
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE daily_totals RESUME;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: Materialized table `default_catalog`.`default_database`.`daily_totals` refresh workflow has been resumed.
!error

ALTER MATERIALIZED TABLE daily_totals SET ('sink.rolling-policy.file-size' = '1MB');
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE daily_totals RESET ('sink.rolling-policy.file-size');
[INFO] Execute statement succeeded.
!info

ALTER MATERIALIZED TABLE daily_totals RESET ('connector');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The option 'connector' of a materialized table cannot be reset.
!error

# OR ALTER on an existing materialized table changes its query (appending a nullable column)
CREATE OR ALTER MATERIALIZED TABLE daily_totals
FRESHNESS = INTERVAL '1' DAY
AS SELECT ds, user_id, SUM(amount) AS total, MAX(amount) AS biggest FROM orders GROUP BY ds, user_id;
[INFO] Execute statement succeeded.
!info

# OR ALTER never turns a plain table into a materialized one (Flink's message names the
# table without backticks)
CREATE OR ALTER MATERIALIZED TABLE orders
FRESHNESS = INTERVAL '1' DAY
AS SELECT ds, user_id, SUM(amount) AS total FROM orders GROUP BY ds, user_id;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table default_catalog.default_database.orders is not a materialized table. Only materialized table support create or alter operation.
!error

ALTER MATERIALIZED TABLE daily_totals REFRESH;
+----------------------------------+--------------------------+
|                           job_id |             cluster_info |
+----------------------------------+--------------------------+
| 00000000000000000000000000000007 | {execution.target=local} |
+----------------------------------+--------------------------+
1 row in set
!ok

SELECT * FROM daily_totals ORDER BY ds, user_id;
+------------+---------+-------+---------+
|         ds | user_id | total | biggest |
+------------+---------+-------+---------+
| 2024-06-01 |       1 |    12 |       7 |
| 2024-06-02 |       2 |     1 |       1 |
| 2024-06-02 |       3 |    10 |      10 |
+------------+---------+-------+---------+
3 rows in set
!ok

# freshness validation (Flink's messages)
CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL '40' MINUTE AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: In full refresh mode, only freshness that are factors of 60 are currently supported when the time unit is MINUTE.
!error

CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL '5' HOUR REFRESH_MODE = FULL AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: In full refresh mode, only freshness that are factors of 24 are currently supported when the time unit is HOUR.
!error

CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL '1' YEAR AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit.
!error

CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL -'30' SECOND AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Materialized table freshness doesn't support negative value.
!error

CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL '0' SECOND AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The freshness interval currently only supports positive integer type values. But was: 0
!error

CREATE MATERIALIZED TABLE bad FRESHNESS = INTERVAL '30' DAY TO HOUR AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Materialized table freshness only support SECOND, MINUTE, HOUR, DAY as the time unit.
!error

CREATE MATERIALIZED TABLE bad PARTITIONED BY (a, e) FRESHNESS = INTERVAL '30' SECOND AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Partition column 'a' not defined in the query's schema. Available columns: ['user_id', 'amount', 'ds'].
!error

CREATE MATERIALIZED TABLE bad (PRIMARY KEY (user_id) NOT ENFORCED) FRESHNESS = INTERVAL '30' SECOND AS SELECT * FROM orders;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid primary key 'PK_user_id'. Column 'user_id' is nullable.
!error

# a refresh overwrites, so the sink must support INSERT OVERWRITE
CREATE MATERIALIZED TABLE to_nowhere WITH ('connector' = 'blackhole') REFRESH_MODE = FULL AS SELECT * FROM orders;
[INFO] Execute statement succeeded.
!info

SHOW CREATE MATERIALIZED TABLE to_nowhere;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                  result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE MATERIALIZED TABLE `default_catalog`.`default_database`.`to_nowhere` (
  `user_id` BIGINT,
  `amount` BIGINT,
  `ds` VARCHAR(2147483647)
)
WITH (
  'connector' = 'blackhole'
)
FRESHNESS = INTERVAL '1' HOUR
REFRESH_MODE = FULL
AS SELECT `orders`.`user_id`, `orders`.`amount`, `orders`.`ds`
FROM `default_catalog`.`default_database`.`orders` AS `orders`
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

ALTER MATERIALIZED TABLE to_nowhere REFRESH;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: INSERT OVERWRITE requires that the underlying DynamicTableSink of table 'default_catalog.default_database.to_nowhere' implements the SupportsOverwrite interface.
!error

DROP MATERIALIZED TABLE to_nowhere;
[INFO] Execute statement succeeded.
!info

DROP MATERIALIZED TABLE daily_totals;
[INFO] Execute statement succeeded.
!info

SHOW MATERIALIZED TABLES;
Empty set
!ok
