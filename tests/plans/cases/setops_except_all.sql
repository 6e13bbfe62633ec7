CREATE TABLE a (s STRING, n INT) WITH ('connector' = 'filesystem', 'path' = 'a.csv', 'format' = 'csv');
CREATE TABLE b (s STRING, n BIGINT) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT s, n FROM a EXCEPT ALL SELECT s, n FROM b;
