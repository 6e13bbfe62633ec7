# function.q - CREATE/DROP/DESCRIBE FUNCTION, SHOW FUNCTIONS

create function shout as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

create function shout as 'script_udfs.shout' language python;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Could not register function. A function named 'shout' already exists.
!error

create function if not exists shout as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

create temporary function t_shout as 'script_udfs.shout' language python;
[INFO] Execute statement succeeded.
!info

# Flink 2.x's WITH clause: the function's options (accepted; a Python function takes none)
create temporary function if not exists t_shout as 'script_udfs.shout' language python with ('k1' = 'v1');
[INFO] Execute statement succeeded.
!info

create temporary function t_java as 'com.example.Shout' using jar '/tmp/a.jar', jar '/tmp/b.jar' with ('k1' = 'v1');
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Function 't_java' is LANGUAGE JAVA: Java functions need a JVM, which streamsql does not have. Write it in Python and declare LANGUAGE PYTHON (AS 'package.module.function', see docs/udf.md).
!error

show user functions;
+---------------+
| function name |
+---------------+
|         shout |
|       t_shout |
+---------------+
2 rows in set
!ok

show functions like 'shou%';
+---------------+
| function name |
+---------------+
|         shout |
+---------------+
1 row in set
!ok

show functions ilike 'UPPE_';
+---------------+
| function name |
+---------------+
|         upper |
+---------------+
1 row in set
!ok

select shout('hi') as s, t_shout('ho') as t;
+----+--------------------------------+--------------------------------+
| op |                              s |                              t |
+----+--------------------------------+--------------------------------+
| +I |                            HI! |                            HO! |
+----+--------------------------------+--------------------------------+
Received a total of 1 row
!ok

describe function shout;
+-------------------+-------------------+
|         info name |        info value |
+-------------------+-------------------+
|   system function |             false |
|         temporary |             false |
|        class name | script_udfs.shout |
| function language |            PYTHON |
|     resource uris |                [] |
+-------------------+-------------------+
5 rows in set
!ok

describe function extended t_shout;
+-------------------+-------------------+
|         info name |        info value |
+-------------------+-------------------+
|   system function |             false |
|         temporary |              true |
|        class name | script_udfs.shout |
| function language |            PYTHON |
|     resource uris |                [] |
|              kind |            SCALAR |
|      requirements |                [] |
|     deterministic |              true |
|  constant folding |              true |
+-------------------+-------------------+
9 rows in set
!ok

describe function upper;
+-----------------+------------+
|       info name | info value |
+-----------------+------------+
| system function |       true |
|       temporary |      false |
+-----------------+------------+
2 rows in set
!ok

desc function extended `SUM`;
+------------------+------------+
|        info name | info value |
+------------------+------------+
|  system function |       true |
|        temporary |      false |
|             kind |  AGGREGATE |
|     requirements |         [] |
|    deterministic |       true |
| constant folding |       true |
+------------------+------------+
6 rows in set
!ok

describe function no_such_function;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Function 'no_such_function' does not exist.
!error

create function lower_udf as 'com.example.LowerUDF';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Function 'lower_udf' is LANGUAGE JAVA: Java functions need a JVM, which streamsql does not have. Write it in Python and declare LANGUAGE PYTHON (AS 'package.module.function', see docs/udf.md).
!error

create function scala_udf as 'com.example.Udf' language scala;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Function 'scala_udf' is LANGUAGE SCALA: Scala functions need a JVM, which streamsql does not have. Write it in Python and declare LANGUAGE PYTHON (AS 'package.module.function', see docs/udf.md).
!error

drop function shout;
[INFO] Execute statement succeeded.
!info

drop temporary function t_shout;
[INFO] Execute statement succeeded.
!info

drop function if exists shout;
[INFO] Execute statement succeeded.
!info

show user functions;
Empty set
!ok
