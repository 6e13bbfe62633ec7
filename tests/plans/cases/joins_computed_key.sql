-- Nexmark q13_regular's join: MOD(auction, 10000) = key is an equi-join key on a column
-- computed below the join ($f4), not a residual condition over every pair of rows.
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, `dateTime` TIMESTAMP(3), extra VARCHAR) WITH ('connector' = 'filesystem', 'path' = 'b.csv', 'format' = 'csv');
CREATE TABLE side_input (`key` BIGINT, `value` VARCHAR) WITH ('connector' = 'filesystem', 'path' = 's.csv', 'format' = 'csv');

EXPLAIN CHANGELOG_MODE SELECT b.auction, b.bidder, b.price, b.`dateTime`, s.`value`
FROM bid AS b
JOIN side_input AS s
  ON MOD(b.auction, 10000) = s.`key`;
