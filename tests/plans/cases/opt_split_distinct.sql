SET 'table.optimizer.distinct-agg.split.enabled' = 'true';
SET 'table.optimizer.distinct-agg.split.bucket-num' = '1024';

CREATE TABLE bids (
  auction BIGINT,
  bidder BIGINT,
  price BIGINT,
  channel STRING
) WITH ('connector' = 'filesystem', 'path' = 'bids.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT channel, COUNT(*) AS total,
  COUNT(DISTINCT bidder) AS bidders,
  COUNT(DISTINCT bidder) FILTER (WHERE price < 10000) AS rank1_bidders,
  COUNT(DISTINCT bidder) FILTER (WHERE price >= 10000) AS rank2_bidders
FROM bids GROUP BY channel;
