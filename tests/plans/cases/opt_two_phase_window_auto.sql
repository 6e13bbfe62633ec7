SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '1000';

CREATE TABLE bids (
  auction BIGINT,
  price BIGINT,
  ts TIMESTAMP_LTZ(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT window_start, window_end, window_time, COUNT(*) AS n, MIN(price) AS lo
FROM TABLE(CUMULATE(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY window_start, window_end, window_time;
