CREATE TABLE l (
  ts TIMESTAMP(3),
  k STRING,
  lv INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'left.csv', 'format' = 'csv');
CREATE TABLE r (
  ts TIMESTAMP(3),
  k STRING,
  rv INT,
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'right.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT L.window_start, L.window_end, L.k, L.lv, R.rv
FROM (SELECT * FROM TABLE(TUMBLE(TABLE l, DESCRIPTOR(ts), INTERVAL '10' SECOND))) L
LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE r, DESCRIPTOR(ts), INTERVAL '10' SECOND))) R
  ON L.window_start = R.window_start AND L.window_end = R.window_end AND UPPER(L.k) = R.k AND L.lv < R.rv + 1;
