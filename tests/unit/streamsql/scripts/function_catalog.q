# function_catalog.q - catalog functions: ALTER FUNCTION, calls qualified by database and catalog

create database db1;
[INFO] Execute statement succeeded.
!info

create function db1.shout as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

create table words (w string) with ('connector' = 'datagen', 'number-of-rows' = '0');
[INFO] Execute statement succeeded.
!info

# a function of another database is called by its qualified name
select db1.shout('hello'), default_catalog.db1.shout('hi'), `db1`.`shout`('x');
+----+--------------------------------+--------------------------------+--------------------------------+
| op |                         EXPR$0 |                         EXPR$1 |                         EXPR$2 |
+----+--------------------------------+--------------------------------+--------------------------------+
| +I |                         HELLO! |                            HI! |                             X! |
+----+--------------------------------+--------------------------------+--------------------------------+
Received a total of 1 row
!ok

# an unqualified name looks in the current database only
select shout('hello');
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature SHOUT(<CHARACTER>)
At line 1, column 8:
  select shout('hello')
         ^
!error

# a qualified name never means a built-in function
select db1.upper('hello');
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature upper(<CHARACTER>)
At line 1, column 8:
  select db1.upper('hello')
         ^
!error

alter function db1.shout as 'script_udfs.whisper' language python;
[INFO] Execute statement succeeded.
!info

select db1.shout('HELLO');
+----+--------------------------------+
| op |                         EXPR$0 |
+----+--------------------------------+
| +I |                       hello... |
+----+--------------------------------+
Received a total of 1 row
!ok

use db1;
[INFO] Execute statement succeeded.
!info

select shout('HELLO');
+----+--------------------------------+
| op |                         EXPR$0 |
+----+--------------------------------+
| +I |                       hello... |
+----+--------------------------------+
Received a total of 1 row
!ok

show user functions;
+---------------+
| function name |
+---------------+
|         shout |
+---------------+
1 row in set
!ok

alter function if exists nope as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

alter function nope as 'script_udfs.shout' language python;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Function db1.nope does not exist in Catalog default_catalog.
!error

alter function shout as 'com.example.Shout';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Function 'shout' is LANGUAGE JAVA: Java functions need a JVM, which streamsql does not have. Declare LANGUAGE PYTHON (see docs/udf.md).
!error

create temporary function tmp_f as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

alter temporary function tmp_f as 'script_udfs.whisper' language python;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Alter temporary catalog function is not supported
!error

alter temporary system function tmp_f as 'script_udfs.whisper' language python;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Alter temporary system function is not supported
!error

drop function shout;
[INFO] Execute statement succeeded.
!info

select default_catalog.db1.shout('x');
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature shout(<CHARACTER>)
At line 1, column 8:
  select default_catalog.db1.shout('x')
         ^
!error

# procedures: streamsql's catalogs hold none
show procedures;
Empty set
!ok

call db1.compact('words');
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature compact(<CHARACTER>)
At line 1, column 6:
  call db1.compact('words')
       ^
streamsql's catalogs have no procedures (SHOW PROCEDURES lists none).
!error

call no_catalog.db1.compact('words');
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: No match found for function signature compact(<CHARACTER>)
At line 1, column 6:
  call no_catalog.db1.compact('words')
       ^
streamsql's catalogs have no procedures (SHOW PROCEDURES lists none).
!error
