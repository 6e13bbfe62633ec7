# misc.q - statements that need a JVM, and batch-only statements

add jar '/tmp/udf.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: ADD JAR needs a JVM: streamsql runs Flink SQL without one, so JAR files cannot be loaded. Write user-defined functions in Python (CREATE FUNCTION ... AS 'pkg.module.fn' LANGUAGE PYTHON).
!error

remove jar '/tmp/udf.jar';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: REMOVE JAR needs a JVM: streamsql runs Flink SQL without one, so JAR files cannot be loaded. Write user-defined functions in Python (CREATE FUNCTION ... AS 'pkg.module.fn' LANGUAGE PYTHON).
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

# models predict through model providers on the JVM: none can be created
create model sentiment input (text string) output (label string) with ('provider' = 'openai', 'task' = 'classification');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: CREATE MODEL is not supported: Flink's models predict through model providers that run on the JVM, and streamsql has none. Call a model from a Python function instead (CREATE FUNCTION ... LANGUAGE PYTHON, docs/udf.md).
!error

drop model if exists sentiment;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: DROP MODEL is not supported: Flink's models predict through model providers that run on the JVM, and streamsql has none. Call a model from a Python function instead (CREATE FUNCTION ... LANGUAGE PYTHON, docs/udf.md).
!error

show models;
Empty set
!ok

describe model sentiment;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: DESCRIBE MODEL is not supported: Flink's models predict through model providers that run on the JVM, and streamsql has none. Call a model from a Python function instead (CREATE FUNCTION ... LANGUAGE PYTHON, docs/udf.md).
!error
