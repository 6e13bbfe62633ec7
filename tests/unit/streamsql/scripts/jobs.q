# jobs.q - SHOW JOBS / DESCRIBE JOB

describe job 'ffffffffffffffffffffffffffffffff';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.gateway.service.utils.SqlExecutionException: Described job ffffffffffffffffffffffffffffffff does not exist.
!error

set 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

set 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

create table sink (x int) with ('connector' = 'blackhole');
[INFO] Execute statement succeeded.
!info

insert into sink values (1);
[INFO] Complete execution of the SQL update statement.
!info
