# set.q - SET / RESET: SET lists only the keys set in the session

set;
+------------------------+-----------+
|                    key |     value |
+------------------------+-----------+
| execution.runtime-mode | streaming |
+------------------------+-----------+
1 row in set
!ok

set 'sql-client.execution.result-mode' = 'tableau';
[INFO] Execute statement succeeded.
!info

set 'table.local-time-zone' = 'Europe/Paris';
[INFO] Execute statement succeeded.
!info

set;
+----------------------------------+--------------+
|                              key |        value |
+----------------------------------+--------------+
|           execution.runtime-mode |    streaming |
| sql-client.execution.result-mode |      tableau |
|            table.local-time-zone | Europe/Paris |
+----------------------------------+--------------+
3 rows in set
!ok

reset 'table.local-time-zone';
[INFO] Execute statement succeeded.
!info

set;
+----------------------------------+-----------+
|                              key |     value |
+----------------------------------+-----------+
|           execution.runtime-mode | streaming |
| sql-client.execution.result-mode |   tableau |
+----------------------------------+-----------+
2 rows in set
!ok

reset;
[INFO] Execute statement succeeded.
!info

set;
Empty set
!ok

set 'sql-client.execution.result-mode' = 'tabel';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Invalid value 'tabel' for key 'sql-client.execution.result-mode': expected one of 'tableau', 'changelog', 'table'.
At line 1, column 42:
  set 'sql-client.execution.result-mode' = 'tabel'
                                           ^
!error
