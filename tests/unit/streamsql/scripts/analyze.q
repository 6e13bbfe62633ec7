# analyze.q - ANALYZE TABLE: row counts and column statistics into the catalog (batch mode
# only). The values are read back through the catalog API in
# tests/unit/streamsql/test_analyze_table.py: Flink's SQL shows no statistics.

CREATE TABLE orders (id INT, buyer STRING, amount DOUBLE, total AS amount * 2)
WITH ('connector' = 'filesystem', 'path' = '$TMP/orders', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

CREATE TABLE sales (amount INT, dt STRING) PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = '$TMP/sales', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

# the statement is validated first, then refused in streaming mode
ANALYZE TABLE orders COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ANALYZE TABLE is not supported for streaming mode now
!error

ANALYZE TABLE no_such COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table `default_catalog`.`default_database`.`no_such` doesn't exist or is a temporary table.
!error

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

INSERT INTO orders VALUES (1, 'ann', 10.5), (2, 'bob', 3.0), (3, CAST(NULL AS STRING), 7.25);
[INFO] Complete execution of the SQL update statement.
!info

INSERT INTO sales VALUES (1, '2024-01-01'), (2, '2024-01-01'), (3, '2024-01-02');
[INFO] Complete execution of the SQL update statement.
!info

ANALYZE TABLE orders COMPUTE STATISTICS;
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE orders COMPUTE STATISTICS FOR ALL COLUMNS;
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS id, total;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Column: total is a computed column, ANALYZE TABLE does not support computed column.
At line 1, column 57:
  ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS id, total
                                                          ^
!error

ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS nope;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Column: nope does not exist in the table: `default_catalog`.`default_database`.`orders`.
At line 1, column 53:
  ANALYZE TABLE orders COMPUTE STATISTICS FOR COLUMNS nope
                                                      ^
!error

ANALYZE TABLE orders PARTITION (id = 1) COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid ANALYZE TABLE statement. Table: `default_catalog`.`default_database`.`orders` is not a partition table, while partition values are given.
!error

ANALYZE TABLE orders COMPUTE STATISTICS NOSCAN;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Encountered "NOSCAN" at line 1, column 41.
Was expecting one of:
    <EOF>
    "FOR" ...
At line 1, column 41:
  ANALYZE TABLE orders COMPUTE STATISTICS NOSCAN
                                          ^
Flink's ANALYZE TABLE has no NOSCAN: it always reads the table.
!error

CREATE VIEW big_orders AS SELECT * FROM orders WHERE amount > 5;
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE big_orders COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: ANALYZE TABLE for a view is not allowed.
!error

CREATE TEMPORARY TABLE scratch (x INT) WITH ('connector' = 'filesystem', 'path' = '$TMP/scratch', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE scratch COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Table `default_catalog`.`default_database`.`scratch` doesn't exist or is a temporary table.
!error

# a partitioned table: every partition key, with or without a value
ANALYZE TABLE sales COMPUTE STATISTICS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid ANALYZE TABLE statement. For partition table, all partition keys should be specified explicitly. The given partition keys: [] are not match the target partition keys: [dt].
!error

ANALYZE TABLE sales PARTITION (dt) COMPUTE STATISTICS FOR ALL COLUMNS;
[INFO] Execute statement succeeded.
!info

ANALYZE TABLE sales PARTITION (dt = '2024-01-02') COMPUTE STATISTICS;
[INFO] Execute statement succeeded.
!info
