# connectors.q - the examples of Flink 2.x's connector and format pages (docs/connectors/table/:
# filesystem.md, datagen.md, print.md, blackhole.md, formats/csv.md, formats/parquet.md,
# formats/orc.md), run unchanged except where noted. Paths are under $TMP; the pages write
# 'file:///path/to/whatever' or '/tmp/...'. Kafka stands in as the filesystem connector where
# a page uses Kafka only to show a format (csv.md); the jdbc page's examples run against a real
# PostgreSQL in tests/e2e/test_postgres_jdbc.py. Print sinks write to the job's stdout, as
# Flink's write to the task's log, so their lines are not part of the client's output.

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

# filesystem.md: "A filesystem table can be defined as" (the elided columns dropped, the
# options given values)
CREATE TABLE MyUserTable (
  column_name1 INT,
  column_name2 STRING,
  part_name1 INT,
  part_name2 STRING
) PARTITIONED BY (part_name1, part_name2) WITH (
  'connector' = 'filesystem',           -- required: specify the connector
  'path' = 'file://$TMP/whatever',      -- required: path to a directory
  'format' = 'csv',                     -- required: file system connector requires to specify a format,
                                        -- Please refer to Table Formats
                                        -- section for more details
  'partition.default-name' = 'none',    -- optional: default partition name in case the dynamic partition
                                        -- column value is null/empty string

  -- optional: the option to enable shuffle data by dynamic partition fields in sink phase, this can greatly
  -- reduce the number of file for filesystem sink but may lead data skew, the default value is false.
  'sink.shuffle-by-partition.enable' = 'true'
);
[INFO] Execute statement succeeded.
!info

INSERT INTO MyUserTable VALUES (1, 'a b', 1, 'x'), (2, 'c', CAST(NULL AS INT), 'y');
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM MyUserTable ORDER BY column_name1;
+--------------+--------------+------------+------------+
| column_name1 | column_name2 | part_name1 | part_name2 |
+--------------+--------------+------------+------------+
|            1 |          a b |          1 |          x |
|            2 |            c |     <NULL> |          y |
+--------------+--------------+------------+------------+
2 rows in set
!ok

# parquet.md: "How to create a table with Parquet format"
CREATE TABLE user_behavior (
  user_id BIGINT,
  item_id BIGINT,
  category_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3),
  dt STRING
) PARTITIONED BY (dt) WITH (
 'connector' = 'filesystem',
 'path' = '$TMP/user_behavior',
 'format' = 'parquet'
);
[INFO] Execute statement succeeded.
!info

INSERT INTO user_behavior VALUES (1, 10, 100, 'pv', TIMESTAMP '2020-05-20 12:00:00.123', '2020-05-20');
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM user_behavior;
+---------+---------+-------------+----------+-------------------------+------------+
| user_id | item_id | category_id | behavior |                      ts |         dt |
+---------+---------+-------------+----------+-------------------------+------------+
|       1 |      10 |         100 |       pv | 2020-05-20 12:00:00.123 | 2020-05-20 |
+---------+---------+-------------+----------+-------------------------+------------+
1 row in set
!ok

# parquet.md's options: Spark-compatible INT64 timestamps
CREATE TABLE user_behavior_int64 WITH ('parquet.write.int64.timestamp' = 'true', 'parquet.timestamp.time.unit' = 'millis', 'parquet.utc-timezone' = 'true', 'path' = '$TMP/user_behavior_int64') LIKE user_behavior;
[INFO] Execute statement succeeded.
!info

INSERT INTO user_behavior_int64 SELECT * FROM user_behavior;
[INFO] Complete execution of the SQL update statement.
!info

SELECT ts FROM user_behavior_int64;
+-------------------------+
|                      ts |
+-------------------------+
| 2020-05-20 12:00:00.123 |
+-------------------------+
1 row in set
!ok

# orc.md: "How to create a table with Orc format" (the page's table name is user_behavior too)
CREATE TABLE user_behavior_orc (
  user_id BIGINT,
  item_id BIGINT,
  category_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3),
  dt STRING
) PARTITIONED BY (dt) WITH (
 'connector' = 'filesystem',
 'path' = '$TMP/user_behavior_orc',
 'format' = 'orc',
 'orc.compress' = 'SNAPPY'
);
[INFO] Execute statement succeeded.
!info

INSERT INTO user_behavior_orc SELECT * FROM user_behavior;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM user_behavior_orc;
+---------+---------+-------------+----------+-------------------------+------------+
| user_id | item_id | category_id | behavior |                      ts |         dt |
+---------+---------+-------------+----------+-------------------------+------------+
|       1 |      10 |         100 |       pv | 2020-05-20 12:00:00.123 | 2020-05-20 |
+---------+---------+-------------+----------+-------------------------+------------+
1 row in set
!ok

# csv.md: "How to create a table with CSV format" (filesystem in place of Kafka)
CREATE TABLE user_behavior_csv (
  user_id BIGINT,
  item_id BIGINT,
  category_id BIGINT,
  behavior STRING,
  ts TIMESTAMP(3)
) WITH (
 'connector' = 'filesystem',
 'path' = '$TMP/user_behavior_csv',
 'format' = 'csv',
 'csv.ignore-parse-errors' = 'true',
 'csv.allow-comments' = 'true'
);
[INFO] Execute statement succeeded.
!info

INSERT INTO user_behavior_csv VALUES (1, 10, 100, 'pv', TIMESTAMP '2020-05-20 12:00:00.123'), (2, CAST(NULL AS BIGINT), 100, 'buy, twice', CAST(NULL AS TIMESTAMP(3)));
[INFO] Complete execution of the SQL update statement.
!info

# the NULL BIGINT was written as an empty field: with 'csv.ignore-parse-errors' it reads back as NULL
SELECT * FROM user_behavior_csv ORDER BY user_id;
+---------+---------+-------------+------------+-------------------------+
| user_id | item_id | category_id |   behavior |                      ts |
+---------+---------+-------------+------------+-------------------------+
|       1 |      10 |         100 |         pv | 2020-05-20 12:00:00.123 |
|       2 |  <NULL> |         100 | buy, twice |                  <NULL> |
+---------+---------+-------------+------------+-------------------------+
2 rows in set
!ok

# datagen.md: the Usage examples
CREATE TABLE Orders (
    order_number BIGINT,
    price        DECIMAL(32,2),
    buyer        ROW<first_name STRING, last_name STRING>,
    order_time   TIMESTAMP(3)
) WITH (
  'connector' = 'datagen'
);
[INFO] Execute statement succeeded.
!info

CREATE TEMPORARY TABLE GenOrders
WITH (
    'connector' = 'datagen',
    'number-of-rows' = '10'
)
LIKE Orders (EXCLUDING ALL);
[INFO] Execute statement succeeded.
!info

SELECT COUNT(*), COUNT(DISTINCT order_number) > 1, MIN(CHAR_LENGTH(buyer.first_name)) FROM GenOrders;
+--------+--------+--------+
| EXPR$0 | EXPR$1 | EXPR$2 |
+--------+--------+--------+
|     10 |   TRUE |    100 |
+--------+--------+--------+
1 row in set
!ok

CREATE TABLE Orders2 (
    order_number BIGINT,
    price        DECIMAL(32,2),
    buyer        ROW<first_name STRING, last_name STRING>,
    order_time   TIMESTAMP(3),
    seller       VARCHAR(150)
) WITH (
  'connector' = 'datagen',
  'fields.seller.var-len' = 'true',
  'number-of-rows' = '20'
);
[INFO] Execute statement succeeded.
!info

SELECT MAX(CHAR_LENGTH(seller)) <= 150, COUNT(DISTINCT CHAR_LENGTH(seller)) > 1 FROM Orders2;
+--------+--------+
| EXPR$0 | EXPR$1 |
+--------+--------+
|   TRUE |   TRUE |
+--------+--------+
1 row in set
!ok

# datagen.md: the sequence generator bounds the table (the shortest sequence ends it)
CREATE TABLE seq (id INT, name STRING) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '3', 'fields.name.length' = '4');
[INFO] Execute statement succeeded.
!info

SELECT id, CHAR_LENGTH(name) FROM seq;
+----+--------+
| id | EXPR$1 |
+----+--------+
|  1 |      4 |
|  2 |      4 |
|  3 |      4 |
+----+--------+
3 rows in set
!ok

# print.md: "How to create a Print table", and LIKE an existing table
CREATE TABLE print_table (
  f0 INT,
  f1 INT,
  f2 STRING,
  f3 DOUBLE
) WITH (
  'connector' = 'print'
);
[INFO] Execute statement succeeded.
!info

INSERT INTO print_table VALUES (1, 1, 'a', 1.5);
[INFO] Complete execution of the SQL update statement.
!info

CREATE TABLE source_table (f0 INT, f1 INT, f2 STRING, f3 DOUBLE) WITH ('connector' = 'datagen', 'number-of-rows' = '3');
[INFO] Execute statement succeeded.
!info

CREATE TABLE print_table2 WITH ('connector' = 'print')
LIKE source_table (EXCLUDING ALL);
[INFO] Execute statement succeeded.
!info

INSERT INTO print_table2 SELECT * FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

# blackhole.md: "How to create a BlackHole table", and LIKE an existing table
CREATE TABLE blackhole_table (
  f0 INT,
  f1 INT,
  f2 STRING,
  f3 DOUBLE
) WITH (
  'connector' = 'blackhole'
);
[INFO] Execute statement succeeded.
!info

CREATE TABLE blackhole_table2 WITH ('connector' = 'blackhole')
LIKE source_table (EXCLUDING ALL);
[INFO] Execute statement succeeded.
!info

INSERT INTO blackhole_table2 SELECT * FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

# filesystem.md: "File Compaction" (the part files of the input are merged before they appear)
CREATE TABLE compacted (a INT) WITH ('connector' = 'filesystem', 'path' = '$TMP/compacted', 'format' = 'csv', 'auto-compaction' = 'true', 'sink.rolling-policy.file-size' = '1b', 'compaction.file-size' = '1MB');
[INFO] Execute statement succeeded.
!info

INSERT INTO compacted VALUES (1), (2), (3);
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM compacted;
+---+
| a |
+---+
| 1 |
| 2 |
| 3 |
+---+
3 rows in set
!ok
