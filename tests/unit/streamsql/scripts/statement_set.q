# statement_set.q - EXECUTE STATEMENT SET and BEGIN STATEMENT SET ... END

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

execute statement set begin
insert into a values (1), (2);
insert into b values (3);
end;
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

execute statement set begin
select 1;
end;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.sql.parser.impl.ParseException: Only INSERT statements are allowed in a statement set, got 'select'
At line 2, column 1:
  select 1;
  ^
!error
