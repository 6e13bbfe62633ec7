# table_like_ctas.q - CREATE TABLE ... LIKE, CREATE TABLE AS SELECT, CREATE OR REPLACE TABLE AS SELECT

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

CREATE TABLE base (
  id INT,
  name STRING COMMENT 'who',
  ts TIMESTAMP(3),
  name_len AS CHAR_LENGTH(name),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) PARTITIONED BY (name)
WITH ('connector' = 'filesystem', 'path' = '$TMP/base', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

CREATE TABLE copy_all (extra INT) WITH ('path' = '/nonexistent/copy') LIKE base;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE copy_all;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                  result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`copy_all` (
  `id` INT,
  `name` VARCHAR(2147483647) COMMENT 'who',
  `ts` TIMESTAMP(3),
  `name_len` AS CHAR_LENGTH(`name`),
  `extra` INT,
  WATERMARK FOR `ts` AS `ts` - INTERVAL '1' SECOND
)
PARTITIONED BY (`name`)
WITH (
  'connector' = 'filesystem',
  'format' = 'csv',
  'path' = '/nonexistent/copy'
)
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

CREATE TABLE copy_plain WITH ('connector' = 'blackhole') LIKE base (EXCLUDING ALL);
[INFO] Execute statement succeeded.
!info

DESCRIBE copy_plain;
+------+--------------+------+-----+--------+-----------+---------+
| name |         type | null | key | extras | watermark | comment |
+------+--------------+------+-----+--------+-----------+---------+
|   id |          INT | TRUE |     |        |           |         |
| name |       STRING | TRUE |     |        |           |     who |
|   ts | TIMESTAMP(3) | TRUE |     |        |           |         |
+------+--------------+------+-----+--------+-----------+---------+
3 rows in set
!ok

CREATE TABLE copy_clash (WATERMARK FOR ts AS ts) LIKE base (INCLUDING WATERMARKS);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: There already exists a watermark spec for column 'ts' in the base table. You might want to specify EXCLUDING WATERMARKS or OVERWRITING WATERMARKS.
!error

CREATE TABLE copy_opts WITH ('format' = 'json') LIKE base (INCLUDING OPTIONS);
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: There already exists an option ['format' -> 'csv'] in the base table. You might want to specify EXCLUDING OPTIONS or OVERWRITING OPTIONS.
!error

INSERT INTO base VALUES (1, 'ann', TIMESTAMP '2024-01-01 00:00:00'), (2, 'bob', TIMESTAMP '2024-01-01 00:00:01');
[INFO] Complete execution of the SQL update statement.
!info

# CTAS: the table takes the query's columns, then a job fills it
CREATE TABLE lengths WITH ('connector' = 'filesystem', 'path' = '$TMP/lengths', 'format' = 'csv')
AS SELECT id, name_len FROM base;
[INFO] Complete execution of the SQL update statement.
!info

DESCRIBE lengths;
+----------+------+------+-----+--------+-----------+
|     name | type | null | key | extras | watermark |
+----------+------+------+-----+--------+-----------+
|       id |  INT | TRUE |     |        |           |
| name_len |  INT | TRUE |     |        |           |
+----------+------+------+-----+--------+-----------+
2 rows in set
!ok

SELECT * FROM lengths ORDER BY id;
+----+----------+
| id | name_len |
+----+----------+
|  1 |        3 |
|  2 |        3 |
+----+----------+
2 rows in set
!ok

CREATE TABLE lengths WITH ('connector' = 'blackhole') AS SELECT id FROM base;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.catalog.exceptions.TableAlreadyExistException: Table (or view) default_database.lengths already exists in Catalog default_catalog.
!error

# RTAS replaces it
CREATE OR REPLACE TABLE lengths WITH ('connector' = 'filesystem', 'path' = '$TMP/lengths2', 'format' = 'csv')
AS SELECT id, UPPER(name) AS loud FROM base;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM lengths ORDER BY id;
+----+------+
| id | loud |
+----+------+
|  1 |  ANN |
|  2 |  BOB |
+----+------+
2 rows in set
!ok
