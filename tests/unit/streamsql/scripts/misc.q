# misc.q - statements that need a JVM, and batch-only statements

add jar '/tmp/udf.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ADD JAR is not supported: a JAR holds Java code, and streamsql runs Flink SQL without a JVM
Write user-defined functions in Python instead (CREATE FUNCTION f AS 'pkg.module.fn' LANGUAGE PYTHON, docs/udf.md); connectors and formats are built in (docs/connectors/).
!error

remove jar '/tmp/udf.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: REMOVE JAR is not supported: a JAR holds Java code, and streamsql runs Flink SQL without a JVM
Write user-defined functions in Python instead (CREATE FUNCTION f AS 'pkg.module.fn' LANGUAGE PYTHON, docs/udf.md); connectors and formats are built in (docs/connectors/).
!error

show jars;
Empty set
!ok

create table t (a int) with ('connector' = 'datagen');
[INFO] Execute statement succeeded.
!info

truncate table t;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: TRUNCATE TABLE statement is not supported in streaming mode.
!error

analyze table t compute statistics;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ANALYZE TABLE is not supported for streaming mode now
!error

select * from no_such_table;
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: Object 'no_such_table' not found
At line 1, column 15:
  select * from no_such_table
                ^
!error

selec 1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Non-query expression encountered in illegal context
Unknown statement starting with 'selec'. Did you mean 'SELECT'?
!error

show current catalog;
+----------------------+
| current catalog name |
+----------------------+
|      default_catalog |
+----------------------+
1 row in set
!ok

show current database;
+-----------------------+
| current database name |
+-----------------------+
|      default_database |
+-----------------------+
1 row in set
!ok

show models;
Empty set
!ok
