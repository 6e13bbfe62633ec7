SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '1 s';
SET 'table.exec.mini-batch.size' = '1000';
SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';

CREATE TABLE bids (
  auction BIGINT,
  price BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT auction, COUNT(*) AS n, MAX(price) AS hi FROM bids GROUP BY auction;
