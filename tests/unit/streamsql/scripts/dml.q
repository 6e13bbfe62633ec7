# dml.q - INSERT OVERWRITE, DELETE, UPDATE (batch mode, sinks that can be overwritten)

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

CREATE TABLE scores (id INT, name STRING, score INT)
WITH ('connector' = 'filesystem', 'path' = '$TMP/scores', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

# streaming mode: Flink refuses all three
INSERT OVERWRITE scores VALUES (1, 'a', 1);
[ERROR] Could not execute SQL statement. Reason:
java.lang.IllegalStateException: Streaming mode not support overwrite.
!error

DELETE FROM scores WHERE id = 1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: DELETE statement is not supported for streaming mode now.
!error

UPDATE scores SET score = 0 WHERE id = 1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: UPDATE statement is not supported for streaming mode now.
!error

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

INSERT INTO scores VALUES (1, 'a', 10), (2, 'b', 20), (3, CAST(NULL AS STRING), 30);
[INFO] Complete execution of the SQL update statement.
!info

INSERT OVERWRITE scores SELECT id, name, score * 2 FROM scores;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM scores ORDER BY id;
+----+------+-------+
| id | name | score |
+----+------+-------+
|  1 |    a |    20 |
|  2 |    b |    40 |
|  3 |      |    60 |
+----+------+-------+
3 rows in set
!ok

# a NULL condition keeps the row, as in SQL
DELETE FROM scores WHERE name = 'a';
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM scores ORDER BY id;
+----+------+-------+
| id | name | score |
+----+------+-------+
|  2 |    b |    40 |
|  3 |      |    60 |
+----+------+-------+
2 rows in set
!ok

UPDATE scores SET score = score + 1, name = 'z' WHERE id = 3;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM scores ORDER BY id;
+----+------+-------+
| id | name | score |
+----+------+-------+
|  2 |    b |    40 |
|  3 |    z |    61 |
+----+------+-------+
2 rows in set
!ok

UPDATE scores SET score = 0;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM scores ORDER BY id;
+----+------+-------+
| id | name | score |
+----+------+-------+
|  2 |    b |     0 |
|  3 |    z |     0 |
+----+------+-------+
2 rows in set
!ok

UPDATE scores SET points = 0;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Unknown target column 'points'
!error

DELETE FROM scores;
[INFO] Complete execution of the SQL update statement.
!info

SELECT COUNT(*) AS n FROM scores;
+---+
| n |
+---+
| 0 |
+---+
1 row in set
!ok

# partitioned tables: a static partition is replaced whole, dynamic ones where rows go
CREATE TABLE events (id INT, dt STRING) PARTITIONED BY (dt)
WITH ('connector' = 'filesystem', 'path' = '$TMP/events', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO events VALUES (1, '2024-01-01'), (2, '2024-01-02'), (3, '2024-01-03');
[INFO] Complete execution of the SQL update statement.
!info

INSERT OVERWRITE events PARTITION (dt = '2024-01-01') SELECT 10;
[INFO] Complete execution of the SQL update statement.
!info

INSERT OVERWRITE events VALUES (20, '2024-01-02');
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM events ORDER BY dt;
+----+------------+
| id |         dt |
+----+------------+
| 10 | 2024-01-01 |
| 20 | 2024-01-02 |
|  3 | 2024-01-03 |
+----+------------+
3 rows in set
!ok

INSERT OVERWRITE events PARTITION (dt = '2024-01-03') SELECT 1 WHERE FALSE;
[INFO] Complete execution of the SQL update statement.
!info

SHOW PARTITIONS events;
+----------------+
| partition name |
+----------------+
|  dt=2024-01-01 |
|  dt=2024-01-02 |
+----------------+
2 rows in set
!ok

SHOW PARTITIONS scores;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.TableNotPartitionedException: Table default_database.scores in catalog default_catalog is not partitioned.
!error

# sinks without row-level modification or overwrite
CREATE TABLE nowhere (x INT) WITH ('connector' = 'blackhole');
[INFO] Execute statement succeeded.
!info

INSERT OVERWRITE nowhere VALUES (1);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: INSERT OVERWRITE requires that the underlying DynamicTableSink of table 'default_catalog.default_database.nowhere' implements the SupportsOverwrite interface.
!error

DELETE FROM nowhere WHERE x = 1;
[ERROR] Could not execute SQL statement. Reason:
java.lang.UnsupportedOperationException: Can't perform delete operation of the table default_catalog.default_database.nowhere because the corresponding dynamic table sink has not yet implemented org.apache.flink.table.connector.sink.abilities.SupportsRowLevelDelete.
!error

UPDATE nowhere SET x = 2;
[ERROR] Could not execute SQL statement. Reason:
java.lang.UnsupportedOperationException: Can't perform update operation of the table default_catalog.default_database.nowhere because the corresponding dynamic table sink has not yet implemented org.apache.flink.table.connector.sink.abilities.SupportsRowLevelUpdate.
!error
