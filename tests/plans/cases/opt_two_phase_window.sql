SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';

CREATE TABLE bids (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT auction, window_start, window_end, COUNT(*) AS n, SUM(price) AS total, MAX(price) AS hi,
  COUNT(bidder) FILTER (WHERE price > 10) AS big
FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
