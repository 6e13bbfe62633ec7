-- Fraud pattern with MATCH_RECOGNIZE: per card, one or more small "test" charges
-- (under 2.00) followed by a large charge (over 500.00) within 5 minutes.
-- Run from the repository root:
--   streamsql -f examples/fraud_pattern.sql
--   streamsql -f examples/fraud_pattern.sql --mode batch
-- Expected: card-1 (two test charges, then 950.00) and card-3 (0.50, then 700.00);
-- card-2's large charge comes too late after its test charge.

SET 'pipeline.auto-watermark-interval' = '0';

CREATE TABLE transactions (
  ts TIMESTAMP(3),
  card_id STRING,
  amount DECIMAL(10, 2),
  merchant STRING,
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/transactions.csv',
  'format' = 'csv'
);

SELECT *
FROM transactions
MATCH_RECOGNIZE (
  PARTITION BY card_id
  ORDER BY ts
  MEASURES
    FIRST(SMALL.ts) AS first_test_ts,
    COUNT(SMALL.amount) AS test_charges,
    BIG.ts AS fraud_ts,
    BIG.amount AS fraud_amount,
    BIG.merchant AS fraud_merchant
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (SMALL+ BIG) WITHIN INTERVAL '5' MINUTE
  DEFINE
    SMALL AS SMALL.amount < 2.00,
    BIG AS BIG.amount > 500.00
);
