"""A stored query in Flink's expanded form (Calcite's validated SQL), as SHOW CREATE VIEW
and SHOW CREATE MATERIALIZED TABLE print it:

    SELECT `orders`.`user`, `orders`.`amount` * 2 AS `double_amount`
    FROM `default_catalog`.`default_database`.`orders` AS `orders`
    WHERE `orders`.`amount` > 1

Stars are expanded, every column is qualified by its table's alias, every table is fully
qualified and aliased (by its name when it had no alias), and FROM / JOIN / WHERE /
GROUP BY / HAVING / ORDER BY start new lines. A query the expansion cannot handle (a
table function, MATCH_RECOGNIZE, ...) is printed as written, with qualified table names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect

if TYPE_CHECKING:
    from planner.catalog import Catalog

_CLAUSES = (exp.From, exp.Join, exp.Where, exp.Group, exp.Having, exp.Order)


def _generator_class() -> type:
    base = type(Dialect.get_or_raise("flink").generator())

    class Expanded(base):  # type: ignore[misc, valid-type]
        """The flink generator with the clauses of a SELECT on their own lines."""

        def sql(self, expression: Any = None, key: str | None = None, comment: bool = True) -> str:
            text: str = super().sql(expression, key, comment)
            node = expression.args.get(key) if key and isinstance(expression, exp.Expression) else expression
            if isinstance(node, _CLAUSES) and isinstance(node.parent, exp.Select) and text.startswith(" "):
                return "\n" + text.lstrip(" ")
            return text

    return Expanded


def expanded_query(query: exp.Expression, catalog: Catalog) -> str:
    """`query` (its table names already fully qualified) in Flink's expanded form."""
    # sqlglot's optimizer (~10 ms to import) loads only for SHOW CREATE of a view or
    # materialized table, not at every start
    from sqlglot.optimizer.qualify import qualify

    tree = query.copy()
    schema: dict[str, Any] = {}
    for table in tree.find_all(exp.Table):
        parts = (table.catalog, table.db, table.name)
        if not all(parts):
            continue
        obj = catalog.get_path(parts)  # type: ignore[arg-type]
        if obj is None:
            continue
        columns = {f.name: "INT" for f in obj.fields}  # the types play no part in qualifying
        schema.setdefault(parts[0], {}).setdefault(parts[1], {})[parts[2]] = columns
    try:
        tree = qualify(
            tree,
            schema=schema,
            dialect="flink",
            quote_identifiers=True,
            identify=True,
            validate_qualify_columns=False,
            expand_alias_refs=False,
        )
    except Exception:  # noqa: BLE001 - a construct the expansion does not know: print as written
        return query.sql(dialect="flink", identify=True)
    for alias in list(tree.find_all(exp.Alias)):
        # Calcite names a plain column reference after the column: no `AS` repeating it.
        if (
            isinstance(alias.this, exp.Column)
            and alias.this.name == alias.alias
            and isinstance(alias.parent, exp.Select)
        ):
            alias.replace(alias.this)
        elif isinstance(alias.parent, exp.Select) and alias.alias.startswith("_col_"):
            alias.set("alias", exp.to_identifier("EXPR$" + alias.alias[len("_col_") :], quoted=True))
    for join in tree.find_all(exp.Join):
        if not join.side and not join.kind and join.args.get("on") is not None:
            join.set("kind", "INNER")  # Calcite spells a plain JOIN out
    generator = _generator_class()(dialect=Dialect.get_or_raise("flink"), identify=True)
    return str(generator.generate(tree))
