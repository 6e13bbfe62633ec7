# statement_set_begin.q - BEGIN STATEMENT SET; ... END; given a statement at a time, as Flink's client takes it

set 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

set 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

create table a (x int) with ('connector' = 'filesystem', 'path' = '$TMP/a', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

create table b (x int) with ('connector' = 'filesystem', 'path' = '$TMP/b', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

END;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: No Statement Set to submit. 'END' statement should be used after 'BEGIN STATEMENT SET'.
!error

BEGIN STATEMENT SET;
[INFO] Execute statement succeeded.
!info

insert into a values (1), (2);
[INFO] Execute statement succeeded.
!info

insert into b values (3);
[INFO] Execute statement succeeded.
!info

select 1;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: Only 'INSERT/CREATE TABLE AS' statement is allowed in Statement Set or use 'END' statement to submit Statement Set.
!error

END;
[INFO] Complete execution of the SQL update statement.
!info

select (select count(*) from a) as in_a, (select count(*) from b) as in_b;
+------+------+
| in_a | in_b |
+------+------+
|    2 |    1 |
+------+------+
1 row in set
!ok

BEGIN STATEMENT SET;
[INFO] Execute statement succeeded.
!info

END;
[INFO] Execute statement succeeded.
!info
