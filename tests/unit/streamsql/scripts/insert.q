# insert.q - INSERT, INSERT ... PARTITION, CREATE TABLE AS, table.dml-sync

set 'table.dml-sync' = 'true';
[INFO] Execute statement succeeded.
!info

set 'execution.runtime-mode' = 'batch';
[INFO] Execute statement succeeded.
!info

create table words (id int, word string) with ('connector' = 'filesystem', 'path' = '$TMP/words', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

insert into words values (1, 'one'), (2, 'two'), (3, 'three');
[INFO] Complete execution of the SQL update statement.
!info

select * from words order by id;
+----+-------+
| id |  word |
+----+-------+
|  1 |   one |
|  2 |   two |
|  3 | three |
+----+-------+
3 rows in set
!ok

create table daily (id int, word string, dt string) partitioned by (dt) with ('connector' = 'filesystem', 'path' = '$TMP/daily', 'format' = 'csv');
[INFO] Execute statement succeeded.
!info

insert into daily partition (dt = '2026-11-26') select id, word from words where id < 3;
[INFO] Complete execution of the SQL update statement.
!info

insert into daily partition (dt = '2026-11-27') (word, id) values ('four', 4);
[INFO] Complete execution of the SQL update statement.
!info

select dt, count(*) as n from daily group by dt order by dt;
+------------+---+
|         dt | n |
+------------+---+
| 2026-11-26 | 2 |
| 2026-11-27 | 1 |
+------------+---+
2 rows in set
!ok

insert into daily partition (nope = 'x') select id, word from words;
[ERROR] Could not execute SQL statement. Reason:
org.apache.flink.table.api.ValidationException: Static partition column 'nope' is not a partition key of the table (PARTITIONED BY (dt))
!error

create table lengths with ('connector' = 'filesystem', 'path' = '$TMP/lengths', 'format' = 'csv') as select word, char_length(word) as len from words;
[INFO] Complete execution of the SQL update statement.
!info

describe lengths;
+------+--------+------+-----+--------+-----------+
| name |   type | null | key | extras | watermark |
+------+--------+------+-----+--------+-----------+
| word | STRING | TRUE |     |        |           |
|  len |    INT | TRUE |     |        |           |
+------+--------+------+-----+--------+-----------+
2 rows in set
!ok

select * from lengths order by len, word;
+-------+-----+
|  word | len |
+-------+-----+
|   one |   3 |
|   two |   3 |
| three |   5 |
+-------+-----+
3 rows in set
!ok

create or replace table lengths with ('connector' = 'filesystem', 'path' = '$TMP/lengths2', 'format' = 'csv') as select upper(word) as w from words where id = 1;
[INFO] Complete execution of the SQL update statement.
!info

select * from lengths;
+-----+
|   w |
+-----+
| ONE |
+-----+
1 row in set
!ok

insert into no_such_table values (1);
[ERROR] Could not execute SQL statement. Reason:
org.apache.calcite.sql.validate.SqlValidatorException: Object 'no_such_table' not found
!error
