CREATE TABLE cdc (
  id INT,
  op STRING,
  name STRING
) WITH ('connector' = 'filesystem', 'path' = 'cdc.json', 'format' = 'json');

EXPLAIN CHANGELOG_MODE SELECT name, COUNT(*) AS cnt
FROM FROM_CHANGELOG(input => TABLE cdc, op_mapping => MAP['c, r', 'INSERT', 'u', 'UPDATE_AFTER', 'b', 'UPDATE_BEFORE', 'd', 'DELETE'])
GROUP BY name;
