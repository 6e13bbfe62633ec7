# select.q - tableau results: streaming (fixed widths by type, op column) and batch

set 'sql-client.execution.result-mode' = 'tableau';
[INFO] Execute statement succeeded.
!info

select id, count(*) as cnt, max(ts) as max_ts
from (values
  (1, 'Hello World', timestamp '2021-04-13 20:12:11.123'),
  (2, 'Hi', timestamp '2021-04-13 19:12:11.123'),
  (2, 'Hi', timestamp '2021-04-13 21:12:11.123')) as t(id, str, ts)
group by id;
+----+-------------+----------------------+-------------------------+
| op |          id |                  cnt |                  max_ts |
+----+-------------+----------------------+-------------------------+
| +I |           1 |                    1 | 2021-04-13 20:12:11.123 |
| +I |           2 |                    1 | 2021-04-13 19:12:11.123 |
| -U |           2 |                    1 | 2021-04-13 19:12:11.123 |
| +U |           2 |                    2 | 2021-04-13 21:12:11.123 |
+----+-------------+----------------------+-------------------------+
Received a total of 4 rows
!ok

select cast(-4819527023150413215 as bigint) as big, cast(null as int) as nothing, true as yes, date '2024-02-29' as d, 'a much longer string than thirty characters' as s;
+----+----------------------+-------------+--------+------------+--------------------------------+
| op |                  big |     nothing |    yes |          d |                              s |
+----+----------------------+-------------+--------+------------+--------------------------------+
| +I | -4819527023150413215 |      <NULL> |   TRUE | 2024-02-29 | a much longer string than t... |
+----+----------------------+-------------+--------+------------+--------------------------------+
Received a total of 1 row
!ok

create temporary view people(name, born, happy) as values
  ('30b5c1bb-0ac0-43d3-b812-fcb649fd2b07', timestamp '2001-01-13 20:11:11.123', true),
  ('8b012d93-6ece-48ad-a2ea-aa75ef7b1d60', timestamp '1979-03-15 22:13:11.123', false);
[INFO] Execute statement succeeded.
!info

select * from people;
+----+--------------------------------+-------------------------+--------+
| op |                           name |                    born |  happy |
+----+--------------------------------+-------------------------+--------+
| +I | 30b5c1bb-0ac0-43d3-b812-fcb... | 2001-01-13 20:11:11.123 |   TRUE |
| +I | 8b012d93-6ece-48ad-a2ea-aa7... | 1979-03-15 22:13:11.123 |  FALSE |
+----+--------------------------------+-------------------------+--------+
Received a total of 2 rows
!ok

set 'sql-client.display.max-column-width' = '10';
[INFO] Execute statement succeeded.
!info

select * from people;
+----+------------+-------------------------+--------+
| op |       name |                    born |  happy |
+----+------------+-------------------------+--------+
| +I | 30b5c1b... | 2001-01-13 20:11:11.123 |   TRUE |
| +I | 8b012d9... | 1979-03-15 22:13:11.123 |  FALSE |
+----+------------+-------------------------+--------+
Received a total of 2 rows
!ok

set 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

select * from people;
+------------+-------------------------+-------+
|       name |                    born | happy |
+------------+-------------------------+-------+
| 30b5c1b... | 2001-01-13 20:11:11.123 |  TRUE |
| 8b012d9... | 1979-03-15 22:13:11.123 | FALSE |
+------------+-------------------------+-------+
2 rows in set
!ok

select id, count(*) as cnt from (values (1, 'a'), (2, 'b'), (2, 'c')) as t(id, s) group by id order by id;
+----+-----+
| id | cnt |
+----+-----+
|  1 |   1 |
|  2 |   2 |
+----+-----+
2 rows in set
!ok

select 1 as one where false;
Empty set
!ok
