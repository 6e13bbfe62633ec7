# plans.q - COMPILE PLAN / EXECUTE PLAN / COMPILE AND EXECUTE PLAN, the statements of Flink's
# "Stateful Upgrades and Evolution" (docs/dev/table/concepts/overview.md): a plan file holds
# streamsql's JobGraph JSON (not Flink's ExecNode JSON), written and run as Flink does.

SET 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

SET 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = 'src', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

INSERT INTO src VALUES (1, 'x'), (2, 'y');
[INFO] Complete execution of the SQL update statement.
!info

CREATE TABLE sink (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = 'sink', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

COMPILE PLAN 'plans/plan.json' FOR INSERT INTO sink SELECT a, b FROM src;
[INFO] Execute statement succeeded.
!info

COMPILE PLAN 'plans/plan.json' FOR INSERT INTO sink SELECT a + 10, b FROM src;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.TableException: Cannot overwrite the plan file 'plans/plan.json'. Either manually remove the file or, if you're debugging your job, set the option 'table.plan.force-recompile' to true.
!error

COMPILE PLAN 'plans/plan.json' IF NOT EXISTS FOR INSERT INTO sink SELECT a + 10, b FROM src;
[INFO] Execute statement succeeded.
!info

EXECUTE PLAN 'plans/plan.json';
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM sink ORDER BY a;
+---+---+
| a | b |
+---+---+
| 1 | x |
| 2 | y |
+---+---+
2 rows in set
!ok

# the file exists: its plan runs, the statement is not compiled again
COMPILE AND EXECUTE PLAN 'plans/plan.json' FOR INSERT INTO sink SELECT a + 10, b FROM src;
[INFO] Complete execution of the SQL update statement.
!info

# (one line: the test's script format ends a statement at the first line ending in ';')
COMPILE AND EXECUTE PLAN 'plans/set.json' FOR STATEMENT SET BEGIN INSERT INTO sink SELECT a + 100, b FROM src; INSERT INTO sink SELECT a + 200, b FROM src; END;
[INFO] Complete execution of the SQL update statement.
!info

SELECT * FROM sink ORDER BY a;
+-----+---+
|   a | b |
+-----+---+
|   1 | x |
|   1 | x |
|   2 | y |
|   2 | y |
| 101 | x |
| 102 | y |
| 201 | x |
| 202 | y |
+-----+---+
8 rows in set
!ok

SET 'table.plan.force-recompile' = 'true';
[INFO] Execute statement succeeded.
!info

COMPILE PLAN 'plans/plan.json' FOR INSERT INTO sink SELECT a + 1000, b FROM src;
[INFO] Execute statement succeeded.
!info

EXECUTE PLAN 'plans/plan.json';
[INFO] Complete execution of the SQL update statement.
!info

SELECT MAX(a) AS m FROM sink;
+------+
|    m |
+------+
| 1002 |
+------+
1 row in set
!ok

EXECUTE PLAN 'plans/nope.json';
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Cannot read the plan file 'plans/nope.json': No such file or directory.
!error
