EXPLAIN CHANGELOG_MODE SELECT name, COUNT(*) AS n, SUM(x) AS sx
FROM (VALUES ('a', 1), ('bb', 2), ('a', CAST(NULL AS INT))) AS v(name, x)
GROUP BY name;
