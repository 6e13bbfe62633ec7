"""Flink-specific AST nodes that sqlglot does not model.

The binder consumes these, so their shapes are a contract:

- `TableFunction`: `FROM TABLE(TUMBLE(...)) [AS] w` and `JOIN TABLE(...)`; stands where an
  `exp.Table` would stand. `this` is the function name (`exp.Identifier`, as written),
  `expressions` the arguments (positional expressions, `TableArgument`, `Descriptor`, or
  `exp.Kwarg(this=Identifier, expression=value)` for `NAME => value`), `alias` an
  optional `exp.TableAlias`.
- `TableArgument`: the `TABLE t [PARTITION BY k, ...]` argument; `this` is an `exp.Table`
  or `exp.Subquery`, `partition_by` a list of `exp.Column`.
- `Descriptor`: `DESCRIPTOR(ts [, ...])`; `expressions` is a list of `exp.Column`.
"""

from __future__ import annotations

from sqlglot import exp


class TableFunction(exp.Expression):
    """A polymorphic table function call in FROM/JOIN: `TABLE(TUMBLE(TABLE t, ...)) AS w`."""

    arg_types = {"this": True, "expressions": True, "alias": False}

    @property
    def name(self) -> str:
        return self.this.name if isinstance(self.this, exp.Expression) else str(self.this)

    @property
    def alias(self) -> str:
        alias = self.args.get("alias")
        return alias.name if isinstance(alias, exp.TableAlias) else ""


class TableArgument(exp.Expression):
    """`TABLE t [PARTITION BY k, ...]`: a table passed to a table function."""

    arg_types = {"this": True, "partition_by": False}


class Descriptor(exp.Expression):
    """`DESCRIPTOR(col, ...)`: column names passed to a table function (e.g. the time column)."""

    arg_types = {"expressions": True}
