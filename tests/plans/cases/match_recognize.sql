CREATE TABLE ticks (
  ts TIMESTAMP(3),
  sym STRING,
  price INT,
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'ticks.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT *
FROM ticks
MATCH_RECOGNIZE (
  PARTITION BY sym
  ORDER BY ts
  MEASURES
    A.price AS start_price,
    LAST(B.price, 1) AS before_bottom,
    SUM(B.price) AS sum_down,
    C.price AS end_price,
    MATCH_ROWTIME() AS rt
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST C
  PATTERN (A B+? C) WITHIN INTERVAL '1' MINUTE
  DEFINE
    B AS price < PREV(price) AND AVG(B.price) < A.price,
    C AS price > PREV(price)
) AS m;
