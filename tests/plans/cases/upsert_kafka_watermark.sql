CREATE TABLE readings (
  id INT,
  v BIGINT,
  ts BIGINT,
  rt AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rt AS rt - INTERVAL '1' SECOND,
  PRIMARY KEY (id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'readings',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json'
);

EXPLAIN CHANGELOG_MODE SELECT v, rt FROM readings WHERE v > 1;
