"""The sqlglot dialect for Flink SQL (registered as "flink" by sqlglot's metaclass).

What differs from sqlglot's defaults, and why:

- Backquoted identifiers, '' as the only string escape, case-sensitive identifiers
  (Flink resolves names case-sensitively), X'..' binary literals.
- `TABLE(f(...))` in FROM/JOIN parses to `ast.TableFunction` (window TVFs), with
  `TABLE t [PARTITION BY ...]`, `DESCRIPTOR(...)` and `name => value` arguments.
- `LATERAL TABLE(f(x))` parses to `exp.Lateral(this=<function call>)`.
- Flink's types: `ROW<a INT>` / `ROW(a INT)`, `MULTISET<T>`, `NOT NULL` inside nested
  types, `TIMESTAMP_LTZ(p)`, `BYTES`, `STRING`.
- Interval units are normalized to Flink's singular names (`SECONDS` → `SECOND`) and a
  range unit is one Var (`HOUR TO MINUTE`).
- `JSON_ARRAY(... [NULL|ABSENT] ON NULL)`, `JSON_VALUE(... RETURNING T ... ON EMPTY/ERROR)`,
  `JSON_QUERY(... WITH [ARRAY] WRAPPER)`, `MAP[k, v, ...]`, `TIMESTAMPADD/TIMESTAMPDIFF`
  with a unit first argument.
- Every function call node records where its name starts (`meta["line"]/["col"]`).
- `CASE x WHEN a, b THEN ...` (a value list) becomes `CASE WHEN x = a OR x = b THEN ...`,
  as Calcite rewrites it.
"""

from __future__ import annotations

import typing as t

from sqlglot import exp, tokens
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.generator import Generator
from sqlglot.parsers.base import BaseParser
from sqlglot.tokens import Token, TokenType

from planner.dialect.ast import Descriptor, TableArgument, TableFunction

# Flink's interval units (singular), accepted also in plural.
INTERVAL_UNITS = ("YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND")
_UNIT_NORMALIZE = {u + "S": u for u in INTERVAL_UNITS} | {u: u for u in INTERVAL_UNITS}

# Type keywords this module parses itself (nested types with NOT NULL, ROW, MULTISET).
_NESTED_TYPE_NAMES = {"ROW", "MULTISET", "ARRAY", "MAP", "STRUCTURED"}


def _unwrap_call(node: exp.Expression) -> exp.Expression:
    """The function node under OVER/FILTER/IGNORE NULLS wrappers."""
    while isinstance(node, (exp.Window, exp.Filter, exp.IgnoreNulls, exp.RespectNulls, exp.WithinGroup)):
        inner = node.this
        if not isinstance(inner, exp.Expression):
            break
        node = inner
    return node


def _typed_literal(node: exp.Expression) -> exp.Expression:
    node.meta["typed_literal"] = True
    return node


def is_typed_literal(node: exp.Expression) -> bool:
    """Whether a Cast node is a typed literal (`TIMESTAMP '2024-01-01 00:00:00'`)."""
    return bool(node._meta and node._meta.get("typed_literal"))  # noqa: SLF001 - read without creating meta


class FlinkParser(BaseParser):
    """sqlglot's parser plus Flink's table functions, types, JSON and interval forms."""

    # SESSION(...) is the legacy session group window; DESCRIPTOR/TABLE handled separately.
    FUNC_TOKENS = BaseParser.FUNC_TOKENS | {TokenType.SESSION}

    FUNCTION_PARSERS = {
        **BaseParser.FUNCTION_PARSERS,
        "JSON_ARRAY": lambda self: self._parse_flink_json_array(),
        "JSON_ARRAYAGG": lambda self: self._parse_flink_json_agg("JSON_ARRAYAGG"),
        "JSON_OBJECTAGG": lambda self: self._parse_flink_json_agg("JSON_OBJECTAGG"),
        "JSON_VALUE": lambda self: self._parse_flink_json_value(),
        "JSON_QUERY": lambda self: self._parse_flink_json_query(),
        "JSON_EXISTS": lambda self: self._parse_flink_json_exists(),
        "TIMESTAMPADD": lambda self: self._parse_flink_timestamp_unit_fn("TIMESTAMPADD"),
        "TIMESTAMPDIFF": lambda self: self._parse_flink_timestamp_unit_fn("TIMESTAMPDIFF"),
    }

    # sqlglot maps some names to other functions; Flink means its own.
    FUNCTIONS = {
        **{
            k: v
            for k, v in BaseParser.FUNCTIONS.items()
            if k not in ("LOG", "CHAR_LENGTH", "CHARACTER_LENGTH", "NOW", "JSON_EXISTS", "LOCATE", "INSTR", "TYPEOF")
        },
        # sqlglot's MOD builder keeps two arguments and drops the rest: another count stays
        # a plain call, so the binder reports the wrong number of arguments.
        "MOD": lambda args: (
            BaseParser.FUNCTIONS["MOD"](args) if len(args) == 2 else exp.Anonymous(this="MOD", expressions=args)
        ),
    }

    # `TIMESTAMP '...'`, `TIME '...'`, `DATE '...'`: typed literals, not CASTs. Calcite gives
    # them the precision of the fraction written and checks their format at validation;
    # the Cast node is marked so the binder can tell them from CAST('...' AS TIMESTAMP).
    TYPE_LITERAL_PARSERS = {
        **BaseParser.TYPE_LITERAL_PARSERS,
        **{
            kind: lambda self, this, dt: _typed_literal(self.expression(exp.Cast(this=this, to=dt)))
            for kind in (exp.DType.TIMESTAMP, exp.DType.TIME, exp.DType.DATE, exp.DType.TIMESTAMPLTZ)
        },
    }

    # Token where the most recent error was raised: parse.py turns it into line/column.
    error_token: Token | None = None
    # Inside sqlglot's type parser (which reads Postgres' `INT ARRAY[3]` bounds).
    _in_type = False

    def raise_error(self, message: str, token: Token | None = None) -> None:
        # None: the error is at the end of the input.
        self.error_token = token or (self._curr if self._curr else None)
        if token is None:
            super().raise_error(message)  # sqlglot's falsy sentinel default: same as passing None
        else:
            super().raise_error(message, token)

    def _parse_csv(self, parse_method: t.Callable[[], t.Any], sep: TokenType = TokenType.COMMA) -> list:
        """sqlglot skips an empty item after a separator (`SELECT a, FROM t`); Flink rejects
        it, so do we, pointing at the token where the item should be."""
        if self._in_type and self._prev and self._prev.token_type == TokenType.ARRAY:
            return []  # `INT ARRAY`: no Postgres `ARRAY[3]` bounds (sqlglot would read on)
        parse_result = parse_method()
        if parse_result is None and sep == TokenType.COMMA and self._curr and self._curr.token_type == sep:
            self.raise_error("Missing expression before ','")
        items = [parse_result] if parse_result is not None else []
        while self._match(sep):
            if isinstance(parse_result, exp.Expr):
                self._add_comments(parse_result)
            parse_result = parse_method()
            if parse_result is None and sep == TokenType.COMMA:
                self.raise_error("Missing expression after ','")
            if parse_result is not None:
                items.append(parse_result)
        return items

    # ------------------------------------------------------------------ LIKE ... ESCAPE e
    def _parse_escape(self, this: exp.Expr | None) -> exp.Expr | None:
        """Calcite takes any operand after ESCAPE (a column or expression too), sqlglot only
        a string literal."""
        if not self._match(TokenType.ESCAPE):
            return this
        return self.expression(exp.Escape(this=this, expression=self._parse_bitwise()))

    # ------------------------------------------------------------------ positions
    def _parse_function_call(
        self,
        functions: dict[str, t.Callable] | None = None,
        anonymous: bool = False,
        optional_parens: bool = True,
        any_token: bool = False,
    ) -> exp.Expr | None:
        token = self._curr
        result = super()._parse_function_call(functions, anonymous, optional_parens, any_token)
        if isinstance(result, exp.Expression) and token is not None:
            node = _unwrap_call(result)
            if isinstance(node, exp.Func) or isinstance(node, exp.Anonymous):
                node.update_positions(token)
            if node is result and self._prev is token and isinstance(node, exp.Func):
                # A niladic function written without parentheses (`LOCALTIME`,
                # `CURRENT_TIMESTAMP`) is an identifier to Calcite until validation, so an
                # unaliased select item is named after it as written.
                node.meta["bare_name"] = token.text
        return result

    # ------------------------------------------------------------------ CASE x WHEN a, b
    def _parse_case(self) -> exp.Expr | None:
        """sqlglot's CASE, plus Flink's (Calcite's) value lists in a simple CASE:
        `CASE x WHEN 1, 2 THEN ...`. A CASE with such a list becomes the searched CASE
        Calcite rewrites it to, `CASE WHEN x = 1 OR x = 2 THEN ...`. Each CASE is parsed
        once (nested CASEs would otherwise be re-parsed at every level)."""
        start = self._index
        if self._match(TokenType.DOT, advance=False):
            return super()._parse_case()  # `case.*` is a column; sqlglot's method retreats
        comments = self._prev_comments
        subject = self._parse_disjunction()
        if subject is None:  # a searched CASE: sqlglot's own
            self._retreat(start)
            return super()._parse_case()
        whens: list[tuple[list[exp.Expr], exp.Expr | None]] = []
        while self._match(TokenType.WHEN):
            parsed = [self._parse_disjunction()]
            while self._match(TokenType.COMMA):
                parsed.append(self._parse_disjunction())
            self._match(TokenType.THEN)
            whens.append(([v for v in parsed if v is not None], self._parse_disjunction()))
        default = self._parse_disjunction() if self._match(TokenType.ELSE) else None
        if not self._match(TokenType.END):
            if isinstance(default, exp.Interval) and default.this.sql().upper() == "END":
                default = exp.column("interval")  # `ELSE interval END`, as sqlglot reads it
            else:
                self.raise_error("Expected END after CASE", self._prev)
        if all(len(values) == 1 for values, _ in whens):
            ifs = [self.expression(exp.If(this=values[0], true=then)) for values, then in whens]
            return self.expression(exp.Case(this=subject, ifs=ifs, default=default), comments=comments)
        ifs = []
        for values, then in whens:
            cond = exp.or_(*(exp.EQ(this=subject.copy(), expression=v) for v in values), copy=False)
            ifs.append(self.expression(exp.If(this=cond, true=then)))
        return self.expression(exp.Case(ifs=ifs, default=default), comments=comments)

    # ------------------------------------------------------------------ MAP[...] constructor
    def _parse_column(self) -> exp.Expr | None:
        if (
            self._curr
            and self._curr.text.upper() == "MAP"
            and self._next
            and self._next.token_type == TokenType.L_BRACKET
        ):
            token = self._curr
            self._advance(2)
            items = self._parse_csv(self._parse_assignment)
            if not self._match(TokenType.R_BRACKET):
                self.raise_error("Expecting ]")
            node = exp.VarMap(
                keys=exp.Array(expressions=items[0::2]),
                values=exp.Array(expressions=items[1::2]),
            )
            node.update_positions(token)
            return self._parse_column_ops(node)
        return super()._parse_column()

    # ------------------------------------------------------------------ intervals
    def _parse_interval(
        self, require_interval: bool = True, parse_function_unit: bool = True
    ) -> exp.Add | exp.Interval | None:
        # Same signature as sqlglot's: its own code calls this with `parse_function_unit=`.
        node = super()._parse_interval(require_interval, parse_function_unit)
        if isinstance(node, exp.Interval):
            _normalize_interval(node)
        return node

    # ------------------------------------------------------------------ FROM items
    def _parse_table(  # type: ignore[override]
        self,
        schema: bool = False,
        joins: bool = False,
        alias_tokens: t.Collection[TokenType] | None = None,
        parse_bracket: bool = False,
        is_db_reference: bool = False,
        parse_partition: bool = False,
        consume_pipe: bool = False,
    ) -> exp.Expr | None:
        if (
            not schema
            and self._curr
            and self._curr.token_type == TokenType.TABLE
            and self._next
            and self._next.token_type == TokenType.L_PAREN
        ):
            node = self._parse_table_function()
            if joins:
                for join in self._parse_joins(alias_tokens=alias_tokens):
                    node.append("joins", join)
            return node
        if (
            not schema
            and self._curr
            and self._curr.token_type == TokenType.TABLE
            and self._next
            and self._next.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        ):
            # `FROM TABLE t` (Calcite's tablePrimary: `[ TABLE ] tablePath`): the table t
            self._advance()
        if not schema and self._at_bare_table_function():
            node = self._parse_table_function(wrapped=False)
            if joins:
                for join in self._parse_joins(alias_tokens=alias_tokens):
                    node.append("joins", join)
            return node
        return super()._parse_table(
            schema=schema,
            joins=joins,
            alias_tokens=alias_tokens,
            parse_bracket=parse_bracket,
            is_db_reference=is_db_reference,
            parse_partition=parse_partition,
            consume_pipe=consume_pipe,
        )

    def _at_bare_table_function(self) -> bool:
        """`name(TABLE t ...` or `name(arg => ...`: a process table function called in FROM
        without the `TABLE(...)` wrapper (`FROM TO_CHANGELOG(input => TABLE t)`), which
        sqlglot would otherwise read as a function-valued table."""
        toks, i = self._tokens, self._index
        if i + 3 >= len(toks) or toks[i + 1].token_type != TokenType.L_PAREN:
            return False
        if toks[i].token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
            return False
        first, second = toks[i + 2], toks[i + 3]
        return first.token_type == TokenType.TABLE or (
            second.token_type == TokenType.FARROW and first.token_type != TokenType.STRING
        )

    def _parse_table_function(self, wrapped: bool = True) -> TableFunction:
        """`TABLE(name(arg, ...)) [AS] alias [(cols)]`; the current token is TABLE. With
        `wrapped=False`: `name(arg, ...) [AS] alias`, the current token is the name."""
        table_token = self._curr
        if wrapped:
            self._advance(2)  # TABLE (
        name_token = self._curr
        if not name_token or name_token.token_type in (TokenType.R_PAREN, TokenType.COMMA):
            self.raise_error("Expected a table function name")
        self._advance()
        name = exp.Identifier(this=name_token.text, quoted=name_token.token_type == TokenType.IDENTIFIER)
        name.update_positions(name_token)
        if not self._match(TokenType.L_PAREN):
            self.raise_error("Expected ( after the table function name")
        args: list[exp.Expression] = []
        if not self._match(TokenType.R_PAREN, advance=False):
            args = self._parse_csv(self._parse_table_function_arg)
        self._match_r_paren()
        if wrapped:
            self._match_r_paren()
        node = TableFunction(this=name, expressions=args)
        node.update_positions(table_token)
        alias = self._parse_table_alias(alias_tokens=self.TABLE_ALIAS_TOKENS)
        if alias:
            node.set("alias", alias)
        return node

    def _parse_table_function_arg(self) -> exp.Expr | None:
        curr, nxt = self._curr, self._next
        if not curr:
            return None
        if nxt.token_type == TokenType.FARROW and curr.token_type != TokenType.STRING:
            self._advance(2)
            key = exp.Identifier(this=curr.text, quoted=curr.token_type == TokenType.IDENTIFIER)
            key.update_positions(curr)
            value = self._parse_table_function_arg()
            return exp.Kwarg(this=key, expression=value)
        if curr.token_type == TokenType.TABLE:
            self._advance()
            if self._match(TokenType.L_PAREN, advance=False):
                this: exp.Expr | None = self._parse_select(table=True)
            else:
                this = self._parse_table_parts()
            if this is None:
                self.raise_error("Expected a table after TABLE")
            node = TableArgument(this=this)
            node.update_positions(curr)
            if self._match(TokenType.PARTITION_BY) or self._match_text_seq("PARTITION", "BY"):
                # Several keys need parentheses: `PARTITION BY (a, b)`.
                if self._match(TokenType.L_PAREN):
                    cols = self._parse_csv(self._parse_column)
                    self._match_r_paren()
                else:
                    cols = [self._parse_column()]
                node.set("partition_by", cols)
            return node
        if curr.text.upper() == "DESCRIPTOR" and nxt.token_type == TokenType.L_PAREN:
            self._advance(2)
            cols = self._parse_csv(self._parse_column)
            self._match_r_paren()
            desc = Descriptor(expressions=cols)
            desc.update_positions(curr)
            return desc
        return self._parse_assignment()

    def _parse_match_recognize(self) -> exp.MatchRecognize | None:
        """sqlglot's MATCH_RECOGNIZE plus Flink's `PATTERN (...) WITHIN INTERVAL ...`, which
        comes out as `args["within"]` (an exp.Interval)."""
        if not self._match(TokenType.MATCH_RECOGNIZE, advance=False):
            return None
        # Cut `WITHIN <interval>` (right after PATTERN's parentheses) out of the token list,
        # let sqlglot parse the rest, then parse the interval on its own.
        toks = self._tokens
        within_tokens: list[Token] = []
        depth = 0
        i = self._index
        while i < len(toks):
            tt = toks[i].token_type
            if tt == TokenType.L_PAREN:
                depth += 1
            elif tt == TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
            elif (
                depth == 1
                and toks[i].text.upper() == "TO"
                and toks[i - 1].text.upper() == "SKIP"
                and i + 1 < len(toks)
                and toks[i + 1].text.upper() not in ("NEXT", "FIRST", "LAST")
            ):
                # `AFTER MATCH SKIP TO v` is `SKIP TO LAST v` (SQL standard, Calcite), a form
                # sqlglot does not parse: spell the LAST out
                t0 = toks[i + 1]
                last = Token(TokenType.VAR, "LAST", t0.line, t0.col, t0.start, t0.start - 1)
                toks = self._tokens = toks[: i + 1] + [last] + toks[i + 1 :]
                self._tokens_size = len(toks)
            elif depth == 1 and toks[i].text.upper() == "WITHIN" and toks[i - 1].token_type == TokenType.R_PAREN:
                j = i + 1
                while j < len(toks) and toks[j].text.upper() != "DEFINE" and toks[j].token_type != TokenType.R_PAREN:
                    j += 1
                within_tokens = toks[i + 1 : j]
                self._tokens = toks[:i] + toks[j:]
                self._tokens_size = len(self._tokens)
                self._advance(0)
                break
            i += 1
        node = super()._parse_match_recognize()
        if node is not None and within_tokens:
            sub = FlinkParser(error_level=self.error_level, dialect=self.dialect)
            sub.sql = self.sql
            interval = sub.parse(within_tokens, self.sql)[0]
            node.set("within", interval)
        return node

    def _parse_lateral(self) -> exp.Lateral | None:
        if (
            self._curr
            and self._curr.token_type == TokenType.LATERAL
            and self._next
            and self._next.token_type == TokenType.TABLE
        ):
            token = self._curr
            self._advance(2)
            self._match_l_paren()
            func = self._parse_function()
            if func is None:
                self.raise_error("Expected a function call in LATERAL TABLE(...)")
            self._match_r_paren()
            alias = self._parse_table_alias()
            node = exp.Lateral(this=func, alias=alias)
            node.update_positions(token)
            return node
        return super()._parse_lateral()

    # ------------------------------------------------------------------ types
    def _parse_types(
        self,
        check_func: bool = False,
        schema: bool = False,
        allow_identifiers: bool = True,
        with_collation: bool = False,
    ) -> exp.Expr | None:
        curr, nxt = self._curr, self._next
        if curr and curr.token_type != TokenType.IDENTIFIER:
            upper = curr.text.upper()
            nxt_type = nxt.token_type
            if upper in _NESTED_TYPE_NAMES and nxt_type == TokenType.LT:
                return self._parse_flink_nested_type()
            if upper == "ROW" and nxt_type == TokenType.L_PAREN and not check_func:
                return self._parse_flink_nested_type()
            if upper == "TIMESTAMP_LTZ":
                self._advance()
                params = self._parse_flink_type_params()
                return exp.DataType(this=exp.DataType.Type.TIMESTAMPLTZ, expressions=params)
        outer, self._in_type = self._in_type, True
        try:
            return super()._parse_types(check_func, schema, allow_identifiers, with_collation)
        finally:
            self._in_type = outer

    def _parse_flink_type_params(self) -> list[exp.Expression]:
        if not self._match(TokenType.L_PAREN):
            return []
        params = self._parse_csv(lambda: self._parse_primary())
        self._match_r_paren()
        return [exp.DataTypeParam(this=p) for p in params if p is not None]

    def parse_flink_type(self) -> exp.DataType:
        """A full Flink type with an optional trailing `NOT NULL`/`NULL` (nested elements,
        DDL columns). NOT NULL sets `nullable=False` on the DataType."""
        token = self._curr
        dt = self._parse_types(check_func=False, schema=True, allow_identifiers=True)
        if not isinstance(dt, exp.DataType):
            self.raise_error("Expected a data type", token)
        dt = t.cast(exp.DataType, dt)
        while self._curr and self._curr.text.upper() in ("ARRAY", "MULTISET"):  # `t ARRAY`, `t MULTISET`
            if self._curr.text.upper() == "ARRAY":
                dt = exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[dt], nested=True)
            else:
                dt = exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="MULTISET", expressions=[dt], nested=True)
            self._advance()
        if self._match_text_seq("NOT", "NULL"):
            dt.set("nullable", False)
        elif self._match(TokenType.NULL):
            dt.set("nullable", True)
        return dt

    def _parse_flink_nested_type(self) -> exp.DataType:
        name_token = self._curr
        upper = name_token.text.upper()
        self._advance()
        close = TokenType.GT if self._curr.token_type == TokenType.LT else TokenType.R_PAREN
        self._advance()
        class_name = None
        if upper == "STRUCTURED":  # STRUCTURED<'class', n0 t0 ['d0'], ...>: a ROW with a class
            if not self._match(TokenType.STRING):
                self.raise_error("Expecting the class name of a STRUCTURED type, a string literal")
            class_name = self._prev.text
            if not self._match(TokenType.COMMA) and not (self._curr and self._curr.token_type == close):
                self.raise_error("Expecting ',' or '>'")
        if upper in ("ROW", "STRUCTURED"):
            fields: list[exp.Expression] = []
            if not self._match(close):
                while True:
                    fname_tok = self._curr
                    if not fname_tok:
                        self.raise_error("Expected a ROW field name")
                    self._advance()
                    fname = exp.Identifier(this=fname_tok.text, quoted=fname_tok.token_type == TokenType.IDENTIFIER)
                    fname.update_positions(fname_tok)
                    ftype = self.parse_flink_type()
                    field_def = exp.ColumnDef(this=fname, kind=ftype)
                    if self._match(TokenType.STRING):  # field description: `ROW<n INT 'd'>`
                        field_def.meta["description"] = self._prev.text
                    fields.append(field_def)
                    if not self._match(TokenType.COMMA):
                        break
                if not self._match(close):
                    self.raise_error(f"Expecting {'>' if close == TokenType.GT else ')'}")
            struct = exp.DataType(this=exp.DataType.Type.STRUCT, expressions=fields, nested=True)
            if class_name is not None:
                struct.meta["class_name"] = class_name
            return struct
        elems = [self.parse_flink_type()]
        while self._match(TokenType.COMMA):
            elems.append(self.parse_flink_type())
        if not self._match(close):
            self.raise_error("Expecting >")
        if upper == "ARRAY":
            return exp.DataType(this=exp.DataType.Type.ARRAY, expressions=elems[:1], nested=True)
        if upper == "MAP":
            if len(elems) != 2:
                self.raise_error("MAP needs a key and a value type", name_token)
            return exp.DataType(this=exp.DataType.Type.MAP, expressions=elems, nested=True)
        return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind="MULTISET", expressions=elems[:1], nested=True)

    # ------------------------------------------------------------------ functions
    def _parse_flink_json_agg(self, name: str) -> exp.Anonymous:
        """JSON_ARRAYAGG(value [NULL|ABSENT ON NULL]) and JSON_OBJECTAGG([KEY] key VALUE value
        [NULL|ABSENT ON NULL]) as NAME(args..., 'NULL'|'ABSENT'); the mode is always spelled
        out (JSON_ARRAYAGG defaults to ABSENT ON NULL, JSON_OBJECTAGG to NULL ON NULL)."""
        args: list[exp.Expr | None] = []
        if name == "JSON_OBJECTAGG":
            self._match_text_seq("KEY")
            args.append(self._parse_bitwise())
            if not self._match_text_seq("VALUE"):
                self.raise_error("Expected VALUE in JSON_OBJECTAGG")
        args.append(self._parse_assignment())
        handling = self._parse_on_handling("NULL", "NULL", "ABSENT")
        default = "ABSENT" if name == "JSON_ARRAYAGG" else "NULL"
        mode = str(handling).split()[0] if isinstance(handling, str) else default
        args.append(exp.Literal.string(mode))
        return exp.Anonymous(this=name, expressions=args)

    def _parse_flink_json_array(self) -> exp.JSONArray:
        values: list[exp.Expr | None] = []
        null_handling = None
        while self._curr and self._curr.token_type != TokenType.R_PAREN:
            null_handling = self._parse_on_handling("NULL", "NULL", "ABSENT")
            if null_handling:
                break
            values.append(self._parse_assignment())
            if not self._match(TokenType.COMMA):
                null_handling = self._parse_on_handling("NULL", "NULL", "ABSENT")
                break
        return exp.JSONArray(expressions=values, null_handling=null_handling)

    def _parse_flink_json_value(self) -> exp.JSONValue:
        this = self._parse_assignment()
        self._match(TokenType.COMMA)
        path = self._parse_assignment()
        returning = self._match(TokenType.RETURNING) and self._parse_types()
        on_condition = self._parse_on_condition()
        return exp.JSONValue(this=this, path=path, returning=returning or None, on_condition=on_condition)

    def _parse_flink_json_query(self) -> exp.JSONExtract:
        this = self._parse_assignment()
        self._match(TokenType.COMMA)
        path = self._parse_assignment()
        returning = self._match(TokenType.RETURNING) and self._parse_types()
        words: list[str] = []
        for first in ("WITHOUT", "WITH"):
            if self._match_text_seq(first):
                words.append(first)
                while self._curr and self._curr.text.upper() in ("ARRAY", "CONDITIONAL", "UNCONDITIONAL", "WRAPPER"):
                    words.append(self._curr.text.upper())
                    self._advance()
                break
        node = exp.JSONExtract(
            this=this,
            expression=path,
            option=exp.var(" ".join(words)) if words else None,
            json_query=True,
            on_condition=self._parse_flink_json_behaviours(),
        )
        if returning:
            node.meta["returning"] = returning
        return node

    def _parse_flink_json_exists(self) -> exp.Anonymous:
        """JSON_EXISTS(doc, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])."""
        doc = self._parse_assignment()
        self._match(TokenType.COMMA)
        path = self._parse_assignment()
        args: list[exp.Expr | None] = [doc, path]
        cond = self._parse_flink_json_behaviours()
        if cond is not None and cond.args.get("error") is not None:
            args.append(exp.Literal.string(cond.args["error"].name.split(" ON ")[0]))
        return exp.Anonymous(this="JSON_EXISTS", expressions=args)

    def _parse_flink_json_behaviours(self) -> exp.OnCondition | None:
        """The `<behaviour> ON EMPTY` / `<behaviour> ON ERROR` clauses of JSON_QUERY and
        JSON_EXISTS, whose behaviours sqlglot does not know (EMPTY ARRAY, EMPTY OBJECT,
        TRUE, FALSE, UNKNOWN): kept as text, e.g. Var('EMPTY ARRAY ON EMPTY')."""
        found: dict[str, exp.Expression] = {}
        words_ok = ("NULL", "ERROR", "EMPTY", "ARRAY", "OBJECT", "TRUE", "FALSE", "UNKNOWN")
        while self._curr is not None:
            start = self._index
            words: list[str] = []
            while self._curr is not None and self._curr.text.upper() in words_ok:
                words.append(self._curr.text.upper())
                self._advance()
            if not words or not self._match_text_seq("ON"):
                self._retreat(start)
                break
            target = self._curr.text.upper() if self._curr is not None else ""
            if target not in ("EMPTY", "ERROR"):
                self._retreat(start)
                break
            self._advance()
            found[target.lower()] = exp.var(f"{' '.join(words)} ON {target}")
        return exp.OnCondition(**found) if found else None

    def _parse_flink_timestamp_unit_fn(self, name: str) -> exp.Anonymous:
        unit_tok = self._curr
        self._advance()
        unit = exp.var(_UNIT_NORMALIZE.get(unit_tok.text.upper(), unit_tok.text.upper()))
        args: list[exp.Expr | None] = [unit]
        while self._match(TokenType.COMMA):
            args.append(self._parse_assignment())
        return exp.Anonymous(this=name, expressions=args)


def _normalize_interval(node: exp.Interval) -> None:
    unit = node.args.get("unit")
    if isinstance(unit, exp.IntervalSpan):
        start = _UNIT_NORMALIZE.get(unit.this.name.upper(), unit.this.name.upper())
        end = _UNIT_NORMALIZE.get(unit.expression.name.upper(), unit.expression.name.upper())
        node.set("unit", exp.var(f"{start} TO {end}"))
    elif isinstance(unit, exp.Var):
        text = unit.name.upper()
        node.set("unit", exp.var(_UNIT_NORMALIZE.get(text, text)))


class Flink(Dialect):
    """Flink SQL as sqlglot reads it: `sqlglot.parse(sql, read="flink")`."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_SENSITIVE
    # Keep the function name as written (e.g. CHAR_LENGTH vs LENGTH) for the binder.
    ORIGINAL_NAME_META_KEY = "original_name"

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        IDENTIFIER_ESCAPES = ["`"]
        HEX_STRINGS = [("X'", "'"), ("x'", "'")]
        # U&'\263A' [UESCAPE '#']: Calcite's Unicode string literal (the binder decodes it)
        UNICODE_STRINGS = [("U&'", "'"), ("u&'", "'")]
        # No statement is swallowed as an opaque command: planner.parse parses them all.
        COMMANDS: t.ClassVar[set[TokenType]] = set()
        KEYWORDS = {
            **tokens.Tokenizer.KEYWORDS,
            "STRING": TokenType.TEXT,
            "BYTES": TokenType.VARBINARY,
            "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE,
        }

    Parser = FlinkParser

    class Generator(Generator):
        """Enough SQL generation for messages and EXPLAIN text (not a full Flink printer)."""

        TRANSFORMS = {
            **Generator.TRANSFORMS,
            TableFunction: lambda self, e: self.tablefunction_sql(e),
            TableArgument: lambda self, e: self.tableargument_sql(e),
            Descriptor: lambda self, e: self.descriptor_sql(e),
        }

        def tablefunction_sql(self, expression: TableFunction) -> str:
            args = ", ".join(self.sql(a) for a in expression.expressions)
            alias = self.sql(expression, "alias")
            return f"TABLE({self.sql(expression, 'this')}({args}))" + (f" AS {alias}" if alias else "")

        def tableargument_sql(self, expression: TableArgument) -> str:
            parts = expression.args.get("partition_by") or []
            out = f"TABLE {self.sql(expression, 'this')}"
            if parts:
                out += " PARTITION BY (" + ", ".join(self.sql(p) for p in parts) + ")"
            return out

        def descriptor_sql(self, expression: Descriptor) -> str:
            return "DESCRIPTOR(" + ", ".join(self.sql(c) for c in expression.expressions) + ")"
