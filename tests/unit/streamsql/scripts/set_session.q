# set_session.q - SET changes how the session runs statements; keys nobody declares are kept as Flink keeps them

set 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

set 'my.own.key' = 'anything';
[INFO] Execute statement succeeded.
!info

set 'table.exec.mini-batch.enabled' = 'true';
[INFO] Execute statement succeeded.
!info

set 'table.exec.mini-batch.allow-latency' = '5 s';
[INFO] Execute statement succeeded.
!info

set;
+-------------------------------------+----------+
|                                 key |    value |
+-------------------------------------+----------+
|              execution.runtime-mode |    batch |
|                          my.own.key | anything |
| table.exec.mini-batch.allow-latency |      5 s |
|       table.exec.mini-batch.enabled |     true |
+-------------------------------------+----------+
4 rows in set
!ok

# batch mode: a query answers its final rows, without the op column
select 1 + 1 as two;
+-----+
| two |
+-----+
|   2 |
+-----+
1 row in set
!ok

reset 'execution.runtime-mode';
[INFO] Execute statement succeeded.
!info

reset 'no.such.key';
[INFO] Execute statement succeeded.
!info

set;
+-------------------------------------+----------+
|                                 key |    value |
+-------------------------------------+----------+
|                          my.own.key | anything |
| table.exec.mini-batch.allow-latency |      5 s |
|       table.exec.mini-batch.enabled |     true |
+-------------------------------------+----------+
3 rows in set
!ok

# streaming mode again: the changelog form
select 1 + 1 as two;
+----+-------------+
| op |         two |
+----+-------------+
| +I |           2 |
+----+-------------+
Received a total of 1 row
!ok
