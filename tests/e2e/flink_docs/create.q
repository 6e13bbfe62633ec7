# create.q - the examples of Flink 2.x's SQL reference, "CREATE Statements" page
# (docs/dev/table/sql/create.md), run unchanged except for the `WITH (...)` options the page
# elides (`...`): a real connector and its required options instead. Expected outputs are
# what Flink's SQL client prints (the page shows the [INFO] lines; tables and SHOW CREATE
# TABLE follow Flink's DESCRIBE and ShowCreateUtil layouts).

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

# "Run a CREATE statement" (SQL CLI tab)
CREATE TABLE Orders (`user` BIGINT, product STRING, amount INT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
[INFO] Execute statement succeeded.
!info

CREATE TABLE RubberOrders (product STRING, amount INT) WITH ('connector' = 'blackhole');
[INFO] Execute statement succeeded.
!info

INSERT INTO RubberOrders SELECT product, amount FROM Orders WHERE product LIKE '%Rubber%';
[INFO] Complete execution of the SQL update statement.
!info

# Columns: physical
CREATE TABLE MyTable (
  `user_id` BIGINT,
  `name` STRING
) WITH (
  'connector' = 'blackhole'
);
[INFO] Execute statement succeeded.
!info

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

# Columns: metadata (a Kafka table; creating it connects to nothing)
CREATE TABLE MyTable (
  `user_id` BIGINT,
  `name` STRING,
  `record_time` TIMESTAMP_LTZ(3) METADATA FROM 'timestamp'    -- reads and writes a Kafka record's timestamp
) WITH (
  'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
);
[INFO] Execute statement succeeded.
!info

DESCRIBE MyTable;
+-------------+------------------+------+-----+---------------------------+-----------+
|        name |             type | null | key |                    extras | watermark |
+-------------+------------------+------+-----+---------------------------+-----------+
|     user_id |           BIGINT | TRUE |     |                           |           |
|        name |           STRING | TRUE |     |                           |           |
| record_time | TIMESTAMP_LTZ(3) | TRUE |     | METADATA FROM 'timestamp' |           |
+-------------+------------------+------+-----+---------------------------+-----------+
3 rows in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

CREATE TABLE MyTable (
  `user_id` BIGINT,
  `name` STRING,
  `timestamp` TIMESTAMP_LTZ(3) METADATA    -- use column name as metadata key
) WITH (
  'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
);
[INFO] Execute statement succeeded.
!info

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

CREATE TABLE MyTable (
  `user_id` BIGINT,
  `name` STRING,
  `timestamp` BIGINT METADATA    -- cast the timestamp as BIGINT
) WITH (
  'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
);
[INFO] Execute statement succeeded.
!info

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

# The page's VIRTUAL example ends its column list with a comma (`name` STRING,): Flink's
# parser refuses that (a column list is `column (, column)*`), so it runs without it here.
CREATE TABLE MyTable (
  `timestamp` BIGINT METADATA,       -- part of the query-to-sink schema
  `offset` BIGINT METADATA VIRTUAL,  -- not part of the query-to-sink schema
  `user_id` BIGINT,
  `name` STRING
) WITH (
  'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
);
[INFO] Execute statement succeeded.
!info

DESCRIBE MyTable;
+-----------+--------+------+-----+------------------+-----------+
|      name |   type | null | key |           extras | watermark |
+-----------+--------+------+-----+------------------+-----------+
| timestamp | BIGINT | TRUE |     |         METADATA |           |
|    offset | BIGINT | TRUE |     | METADATA VIRTUAL |           |
|   user_id | BIGINT | TRUE |     |                  |           |
|      name | STRING | TRUE |     |                  |           |
+-----------+--------+------+-----+------------------+-----------+
4 rows in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

# Columns: computed (the trailing `--` comment is no part of the expression)
CREATE TABLE MyTable (
  `user_id` BIGINT,
  `price` DOUBLE,
  `quantity` DOUBLE,
  `cost` AS price * quantity  -- evaluate expression and supply the result to queries
) WITH (
  'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
);
[INFO] Execute statement succeeded.
!info

DESCRIBE MyTable;
+----------+--------+------+-----+-------------------------+-----------+
|     name |   type | null | key |                  extras | watermark |
+----------+--------+------+-----+-------------------------+-----------+
|  user_id | BIGINT | TRUE |     |                         |           |
|    price | DOUBLE | TRUE |     |                         |           |
| quantity | DOUBLE | TRUE |     |                         |           |
|     cost | DOUBLE | TRUE |     | AS `price` * `quantity` |           |
+----------+--------+------+-----+-------------------------+-----------+
4 rows in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

# WATERMARK
CREATE TABLE Orders2 (
    `user` BIGINT,
    product STRING,
    order_time TIMESTAMP(3),
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

DESCRIBE Orders2;
+------------+------------------------+------+-----+--------+------------------------------------+
|       name |                   type | null | key | extras |                          watermark |
+------------+------------------------+------+-----+--------+------------------------------------+
|       user |                 BIGINT | TRUE |     |        |                                    |
|    product |                 STRING | TRUE |     |        |                                    |
| order_time | TIMESTAMP(3) *ROWTIME* | TRUE |     |        | `order_time` - INTERVAL '5' SECOND |
+------------+------------------------+------+-----+--------+------------------------------------+
3 rows in set
!ok

# PARTITIONED BY names columns of the table
CREATE TABLE Bad (uid BIGINT, name STRING) PARTITIONED BY (day) WITH ('connector' = 'filesystem', 'path' = 'bad', 'format' = 'csv');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Partition column 'day' not defined in the table schema. Available columns: ['uid', 'name']
!error

# DISTRIBUTED: catalog metadata (no streamsql connector writes buckets)
CREATE TABLE MyTable (uid BIGINT, name STRING) DISTRIBUTED BY HASH(uid) INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE MyTable;
+---------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                  result |
+---------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`MyTable` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED BY HASH(`uid`) INTO 4 BUCKETS
 |
+---------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

CREATE TABLE MyTable (uid BIGINT, name STRING) DISTRIBUTED BY (uid) INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE MyTable;
+-----------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                              result |
+-----------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`MyTable` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED BY (`uid`) INTO 4 BUCKETS
 |
+-----------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

CREATE TABLE MyTable (uid BIGINT, name STRING) DISTRIBUTED BY (uid);
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE MyTable;
+--------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                               result |
+--------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`MyTable` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED BY (`uid`)
 |
+--------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

DROP TABLE MyTable;
[INFO] Execute statement succeeded.
!info

CREATE TABLE MyTable (uid BIGINT, name STRING) DISTRIBUTED INTO 4 BUCKETS;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE MyTable;
+------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                   result |
+------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`MyTable` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED INTO 4 BUCKETS
 |
+------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# a distributed table can be read (below, in batch mode), not written: Flink's error for a sink without SupportsBucketing
CREATE TABLE Buckets (uid BIGINT, name STRING) DISTRIBUTED BY RANGE(uid) INTO 2 BUCKETS WITH ('connector' = 'datagen', 'number-of-rows' = '2');
[INFO] Execute statement succeeded.
!info

INSERT INTO Buckets SELECT 1, 'x';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Table 'default_catalog.default_database.Buckets' is distributed into buckets, but the underlying DynamicTableSink doesn't implement the SupportsBucketing interface.
streamsql's connectors write no buckets: write to a table without DISTRIBUTED BY / INTO (ALTER TABLE ... DROP DISTRIBUTION removes it); reading a distributed table works.
!error

CREATE TABLE Bad (uid BIGINT, name STRING) DISTRIBUTED BY HASH(id) INTO 4 BUCKETS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid bucket key 'id'. A bucket key for a distribution must reference a physical column in the schema. Available columns are: [uid, name]
Did you mean 'uid'?
!error

CREATE TABLE Bad (uid BIGINT, name STRING) DISTRIBUTED INTO 0 BUCKETS;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Bucket count must be a positive integer, but was 0.
At line 1, column 61:
  CREATE TABLE Bad (uid BIGINT, name STRING) DISTRIBUTED INTO 0 BUCKETS
                                                              ^
!error

# LIKE
CREATE TABLE Orders3 (
    `user` BIGINT,
    product STRING,
    order_time TIMESTAMP(3)
) WITH (
    'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json',
    'scan.startup.mode' = 'earliest-offset'
);
[INFO] Execute statement succeeded.
!info

CREATE TABLE Orders_with_watermark (
    -- Add watermark definition
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND 
) WITH (
    -- Overwrite the startup-mode
    'scan.startup.mode' = 'latest-offset'
)
LIKE Orders3;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE Orders_with_watermark;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`Orders_with_watermark` (
  `user` BIGINT,
  `product` VARCHAR(2147483647),
  `order_time` TIMESTAMP(3),
  WATERMARK FOR `order_time` AS `order_time` - INTERVAL '5' SECOND
)
WITH (
  'connector' = 'kafka',
  'format' = 'json',
  'properties.bootstrap.servers' = '127.0.0.1:9',
  'scan.startup.mode' = 'latest-offset',
  'topic' = 'docs'
)
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

CREATE TABLE Orders_in_file (
    `user` BIGINT,
    product STRING,
    order_time_string STRING,
    order_time AS to_timestamp(order_time_string)
    
)
PARTITIONED BY (`user`) 
WITH ( 
    'connector' = 'filesystem',
    'path' = 'orders_in_file', 'format' = 'csv'
);
[INFO] Execute statement succeeded.
!info

CREATE TABLE Orders_in_kafka (
    -- Add watermark definition
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND 
) WITH (
    'connector' = 'kafka', 'topic' = 'docs', 'properties.bootstrap.servers' = '127.0.0.1:9', 'format' = 'json'
)
LIKE Orders_in_file (
    -- Exclude everything besides the computed columns which we need to generate the watermark for.
    -- We do not want to have the partitions or filesystem options as those do not apply to kafka. 
    EXCLUDING ALL
    INCLUDING GENERATED
);
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE Orders_in_kafka;
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                    result |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`Orders_in_kafka` (
  `user` BIGINT,
  `product` VARCHAR(2147483647),
  `order_time_string` VARCHAR(2147483647),
  `order_time` AS TO_TIMESTAMP(`order_time_string`),
  WATERMARK FOR `order_time` AS `order_time` - INTERVAL '5' SECOND
)
WITH (
  'connector' = 'kafka',
  'format' = 'json',
  'properties.bootstrap.servers' = '127.0.0.1:9',
  'topic' = 'docs'
)
 |
+---------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# LIKE and DISTRIBUTION (INCLUDING by default; the merging strategies as for partitions)
CREATE TABLE Buckets2 WITH ('number-of-rows' = '5') LIKE Buckets;
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE Buckets2;
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                 result |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`Buckets2` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED BY RANGE(`uid`) INTO 2 BUCKETS
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '5'
)
 |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

CREATE TABLE Buckets3 DISTRIBUTED INTO 3 BUCKETS LIKE Buckets;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The base table already has a distribution defined. You might want to specify EXCLUDING DISTRIBUTION.
!error

CREATE TABLE Buckets3 DISTRIBUTED INTO 3 BUCKETS LIKE Buckets (EXCLUDING DISTRIBUTION);
[INFO] Execute statement succeeded.
!info

SHOW CREATE TABLE Buckets3;
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                 result |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`Buckets3` (
  `uid` BIGINT,
  `name` VARCHAR(2147483647)
)
DISTRIBUTED INTO 3 BUCKETS
WITH (
  'connector' = 'datagen',
  'number-of-rows' = '2'
)
 |
+--------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# AS select_statement (CTAS), batch mode into filesystem tables so the rows can be read back
SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

# reading a distributed table
SELECT COUNT(*) AS n FROM Buckets;
+---+
| n |
+---+
| 2 |
+---+
1 row in set
!ok

CREATE TABLE source_table (id BIGINT NOT NULL, name STRING, age INT, price DOUBLE, quantity DOUBLE, order_time TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'source_table', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO source_table VALUES
  (10, 'ann', 31, 2.5, 2.0, TIMESTAMP '2024-01-01 00:00:00'),
  (11, 'bob', 42, 1.0, 3.0, TIMESTAMP '2024-01-01 00:00:01');
[INFO] Complete execution of the SQL update statement.
!info

CREATE TABLE my_ctas_table
WITH (
    'connector' = 'filesystem', 'path' = 'ctas1', 'format' = 'csv'
)
AS SELECT id, name, age FROM source_table WHERE mod(id, 10) = 0;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM my_ctas_table;
+----+------+-----+
| id | name | age |
+----+------+-----+
| 10 |  ann |  31 |
+----+------+-----+
1 row in set
!ok

# the CREATE part's columns first, then the query's (a column in both parts takes its place in
# the query; `desc` is quoted: DESC is a reserved keyword in Flink's parser too)
CREATE TABLE my_ctas_table2 (
    `desc` STRING,
    quantity DOUBLE,   
    cost AS price * quantity,
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
) WITH (
    'connector' = 'filesystem', 'path' = 'ctas2', 'format' = 'csv'
) AS SELECT id, price, quantity, order_time FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

DESCRIBE my_ctas_table2;
+------------+------------------------+-------+-----+-------------------------+------------------------------------+
|       name |                   type |  null | key |                  extras |                          watermark |
+------------+------------------------+-------+-----+-------------------------+------------------------------------+
|       desc |                 STRING |  TRUE |     |                         |                                    |
|       cost |                 DOUBLE |  TRUE |     | AS `price` * `quantity` |                                    |
|         id |                 BIGINT | FALSE |     |                         |                                    |
|      price |                 DOUBLE |  TRUE |     |                         |                                    |
|   quantity |                 DOUBLE |  TRUE |     |                         |                                    |
| order_time | TIMESTAMP(3) *ROWTIME* |  TRUE |     |                         | `order_time` - INTERVAL '5' SECOND |
+------------+------------------------+-------+-----+-------------------------+------------------------------------+
6 rows in set
!ok

SELECT * FROM my_ctas_table2;
+------+------+----+-------+----------+-------------------------+
| desc | cost | id | price | quantity |              order_time |
+------+------+----+-------+----------+-------------------------+
|      |  5.0 | 10 |   2.5 |      2.0 | 2024-01-01 00:00:00.000 |
|      |  3.0 | 11 |   1.0 |      3.0 | 2024-01-01 00:00:01.000 |
+------+------+----+-------+----------+-------------------------+
2 rows in set
!ok

# a primary key from the SELECT part, a distribution: no streamsql connector writes buckets,
# so the INSERT fails (Flink's non-atomic CTAS has created the table by then: it stays)
CREATE TABLE my_ctas_table3 (
    PRIMARY KEY (id) NOT ENFORCED
) DISTRIBUTED BY (id) INTO 4 buckets 
AS SELECT id, name FROM source_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Table 'default_catalog.default_database.my_ctas_table3' is distributed into buckets, but the underlying DynamicTableSink doesn't implement the SupportsBucketing interface.
streamsql's connectors write no buckets: write to a table without DISTRIBUTED BY / INTO (ALTER TABLE ... DROP DISTRIBUTION removes it); reading a distributed table works.
!error

SHOW CREATE TABLE my_ctas_table3;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                  result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`my_ctas_table3` (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(2147483647),
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
DISTRIBUTED BY (`id`) INTO 4 BUCKETS
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

CREATE OR REPLACE TABLE my_ctas_table3 (
    PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'ctas3', 'format' = 'csv')
AS SELECT id, name FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

SHOW CREATE TABLE my_ctas_table3;
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                           result |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`my_ctas_table3` (
  `id` BIGINT NOT NULL,
  `name` VARCHAR(2147483647),
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'filesystem',
  'format' = 'csv',
  'path' = 'ctas3'
)
 |
+------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# the primary key of a CTAS must be NOT NULL in the query (`name` is nullable)
CREATE TABLE my_ctas_table5 (
    PRIMARY KEY (name) NOT ENFORCED
) WITH ('connector' = 'blackhole')
AS SELECT id, name FROM source_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid primary key 'PK_name'. Column 'name' is nullable.
the query must produce 'name' as NOT NULL, e.g. COALESCE(name, ...) AS name
!error

# names alone reorder the query's columns
CREATE TABLE my_ctas_table4 (
    order_time, price, quantity, id
) WITH (
    'connector' = 'filesystem', 'path' = 'ctas4', 'format' = 'csv'
) AS SELECT id, price, quantity, order_time FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM my_ctas_table4;
+-------------------------+-------+----------+----+
|              order_time | price | quantity | id |
+-------------------------+-------+----------+----+
| 2024-01-01 00:00:00.000 |   2.5 |      2.0 | 10 |
| 2024-01-01 00:00:01.000 |   1.0 |      3.0 | 11 |
+-------------------------+-------+----------+----+
2 rows in set
!ok

CREATE TABLE bad_ctas (order_time, price) WITH ('connector' = 'blackhole') AS SELECT id, price, quantity, order_time FROM source_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The number of columns in the column list must match the number of columns in the source schema. Expected 4 but got 2.
!error

CREATE TABLE bad_ctas (a, b INT) WITH ('connector' = 'blackhole') AS SELECT 1 AS a, 2 AS b;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Column 'a' has no data type. A column list of names alone is only allowed in CREATE TABLE ... AS SELECT, and then every column is a name alone.
At line 1, column 24:
  CREATE TABLE bad_ctas (a, b INT) WITH ('connector' = 'blackhole') AS SELECT 1 AS a, 2 AS b
                         ^
write `name TYPE` for each column, or list only the query's column names
!error

# [CREATE OR] REPLACE TABLE (RTAS)
REPLACE TABLE my_rtas_table
WITH (
    'connector' = 'filesystem', 'path' = 'rtas1', 'format' = 'csv'
)
AS SELECT id, name, age FROM source_table WHERE mod(id, 10) = 0;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: The table `default_catalog`.`default_database`.`my_rtas_table` to be replaced doesn't exist. You can try to use CREATE TABLE AS statement or CREATE OR REPLACE TABLE AS statement.
!error

CREATE OR REPLACE TABLE my_rtas_table
WITH (
    'connector' = 'filesystem', 'path' = 'rtas1', 'format' = 'csv'
)
AS SELECT id, name, age FROM source_table WHERE mod(id, 10) = 0;
[INFO] Complete execution of the SQL update statement.
!info

REPLACE TABLE my_rtas_table
WITH (
    'connector' = 'filesystem', 'path' = 'rtas2', 'format' = 'csv'
)
AS SELECT id, name, age FROM source_table WHERE mod(id, 10) = 1;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM my_rtas_table;
+----+------+-----+
| id | name | age |
+----+------+-----+
| 11 |  bob |  42 |
+----+------+-----+
1 row in set
!ok

REPLACE TABLE my_rtas_table (
    `desc` STRING,
    quantity DOUBLE,   
    cost AS price * quantity,
    WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND,
    PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'rtas3', 'format' = 'csv')
AS SELECT id, price, quantity, order_time FROM source_table;
[INFO] Complete execution of the SQL update statement.
!info

SHOW CREATE TABLE my_rtas_table;
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
|                                                                                                                                                                                                                                                                                                                                                                                                                                    result |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
| CREATE TABLE `default_catalog`.`default_database`.`my_rtas_table` (
  `desc` VARCHAR(2147483647),
  `cost` AS `price` * `quantity`,
  `id` BIGINT NOT NULL,
  `price` DOUBLE,
  `quantity` DOUBLE,
  `order_time` TIMESTAMP(3),
  WATERMARK FOR `order_time` AS `order_time` - INTERVAL '5' SECOND,
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)
WITH (
  'connector' = 'filesystem',
  'format' = 'csv',
  'path' = 'rtas3'
)
 |
+-------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------------+
1 row in set
!ok

# CREATE CATALOG / DATABASE / VIEW / FUNCTION
CREATE CATALOG IF NOT EXISTS docs_catalog COMMENT 'for the docs' WITH ('type' = 'generic_in_memory');
[INFO] Execute statement succeeded.
!info

CREATE DATABASE IF NOT EXISTS docs_catalog.docs_db COMMENT 'a database' WITH ('k1' = 'v1');
[INFO] Execute statement succeeded.
!info

CREATE TEMPORARY VIEW IF NOT EXISTS docs_catalog.docs_db.v (a, b) COMMENT 'a view' AS SELECT id, name FROM default_catalog.default_database.source_table;
[INFO] Execute statement succeeded.
!info

DESCRIBE docs_catalog.docs_db.v;
+------+--------+-------+-----+--------+-----------+
| name |   type |  null | key | extras | watermark |
+------+--------+-------+-----+--------+-----------+
|    a | BIGINT | FALSE |     |        |           |
|    b | STRING |  TRUE |     |        |           |
+------+--------+-------+-----+--------+-----------+
2 rows in set
!ok

# LANGUAGE JAVA (the default) needs a JVM: refused, pointing at Python functions
CREATE TEMPORARY SYSTEM FUNCTION IF NOT EXISTS f AS 'com.example.MyFunction' LANGUAGE JAVA USING JAR '/tmp/f.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Function 'f' is LANGUAGE JAVA: Java functions need a JVM, which streamsql does not have. Write it in Python and declare LANGUAGE PYTHON (AS 'package.module.function', see docs/udf.md).
!error
