SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '1000';
SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';

CREATE TABLE bids (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT auction, COUNT(*) AS n, SUM(price) AS total, MIN(price) AS lo, COUNT(bidder) FILTER (WHERE price > 10) AS big
FROM bids GROUP BY auction;
