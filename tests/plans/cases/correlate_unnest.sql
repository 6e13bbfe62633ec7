CREATE TABLE t (
  id INT,
  tags ARRAY<STRING>,
  attrs MAP<STRING, INT>
) WITH ('connector' = 'filesystem', 'path' = 't.json', 'format' = 'json');

EXPLAIN CHANGELOG_MODE SELECT t.id, x.tag, x.pos, a.k, a.v
FROM t
CROSS JOIN UNNEST(t.tags) WITH ORDINALITY AS x(tag, pos)
LEFT JOIN UNNEST(t.attrs) AS a(k, v) ON TRUE;
