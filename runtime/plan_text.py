"""EXPLAIN text of expressions, literals, windows and aggregate calls, Flink-shaped.

Shared by the planner's EXPLAIN (planner/explain.py) and the operator specs
(runtime/operators/spec.py), which render their own EXPLAIN line: the runtime cannot
import the planner, so the formatting lives here.
"""

from __future__ import annotations

import json
from typing import Any

from runtime.expr.ir import Expr, InputRef, Literal
from runtime.plan_params import AggCallParams, WindowParams
from runtime.types import DataType

_OPS = {
    "plus": "+",
    "minus": "-",
    "times": "*",
    "divide": "/",
    "mod": "MOD",
    "negate": "-",
    "equals": "=",
    "not_equals": "<>",
    "less_than": "<",
    "less_than_or_equal": "<=",
    "greater_than": ">",
    "greater_than_or_equal": ">=",
    "and": "AND",
    "or": "OR",
    "not": "NOT",
    "is_null": "IS NULL",
    "is_not_null": "IS NOT NULL",
    "is_true": "IS TRUE",
    "is_not_true": "IS NOT TRUE",
    "is_false": "IS FALSE",
    "is_not_false": "IS NOT FALSE",
    "is_distinct_from": "IS DISTINCT FROM",
    "is_not_distinct_from": "IS NOT DISTINCT FROM",
    "concat": "||",
    "in": "IN",
    "like": "LIKE",
    "similar_to": "SIMILAR TO",
    "item": "ITEM",
    "array": "ARRAY",
    "map": "MAP",
}


def type_name(t: DataType) -> str:
    return str(t.with_nullable(True).as_time_attr(None))


def format_literal(lit: Literal) -> str:
    t = lit.type
    if lit.value is None:
        return f"null:{type_name(t)}"
    if t.name == "INTERVAL_DAY_TIME":
        return f"{lit.value}:INTERVAL SECOND"
    if t.name == "INTERVAL_YEAR_MONTH":
        return f"{lit.value}:INTERVAL MONTH"
    if isinstance(lit.value, bool):
        return "true" if lit.value else "false"
    if isinstance(lit.value, str) and t.name in ("CHAR", "VARCHAR"):
        return "'" + lit.value.replace("'", "''") + "'"
    if t.name in ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "DOUBLE", "FLOAT", "BIGINT"):
        return f"{lit.value}:{type_name(t)}"
    return str(lit.value)


def format_expr(e: Expr, names: list[str] | None) -> str:
    """An expression Flink-style: `+(v, 1)`; columns by name, or `$i` when names is None."""
    if isinstance(e, InputRef):
        if names is not None and 0 <= e.index < len(names):
            return names[e.index]
        return f"${e.index}"
    if isinstance(e, Literal):
        return format_literal(e)
    if e.name == "python_udf" and e.args and isinstance(e.args[0], Literal):  # a Python UDF: its name
        udf_args = ", ".join(format_expr(a, names) for a in e.args[1:])
        return f"{json.loads(str(e.args[0].value)).get('name')}({udf_args})"
    args = ", ".join(format_expr(a, names) for a in e.args)
    if e.name in ("cast", "try_cast"):
        return f"{e.name.upper()}({args} AS {type_name(e.type)})"
    return f"{_OPS.get(e.name, e.name.upper())}({args})"


def format_window(w: WindowParams | dict[str, Any] | Any, time_col: str) -> str:
    """A window Flink-style: `TUMBLE(time_col=[ts], size=[5 s])`. `w` is a WindowParams,
    a dataclass with its fields (the planner's WindowSpec) or its JSON dict."""
    d = w if isinstance(w, dict) else vars(w)
    parts = [f"time_col=[{time_col}]"]
    if d.get("partition_keys"):
        parts.insert(0, "partition keys=[...]")

    def dur(ms: int) -> str:
        for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000)):
            if ms % size == 0:
                return f"{ms // size} {unit}"
        return f"{ms} ms"

    kind = d["kind"]
    if kind == "TUMBLE":
        parts.append(f"size=[{dur(d['size_ms'])}]")
    elif kind == "HOP":
        parts += [f"size=[{dur(d['size_ms'])}]", f"slide=[{dur(d['slide_ms'])}]"]
    elif kind == "CUMULATE":
        parts += [f"max_size=[{dur(d['size_ms'])}]", f"step=[{dur(d['step_ms'])}]"]
    elif kind == "SESSION":
        parts.append(f"gap=[{dur(d['gap_ms'])}]")
    if d.get("offset_ms"):
        parts.append(f"offset=[{dur(d['offset_ms'])}]")
    return f"{kind}({', '.join(parts)})"


def agg_display_name(name: str) -> str:
    """An aggregate function's name as Flink's plans print it: upper case, and Calcite's
    `$SUM0` (SUM that is 0 over no rows: split distinct's final COUNT) with its `$`."""
    return "$SUM0" if name.lower() == "sum0" else name.upper()


def format_agg(a: AggCallParams | dict[str, Any] | Any, names: list[str], out_name: str | None) -> str:
    """An aggregate call Flink-style: `COUNT(DISTINCT v) FILTER f AS cnt`. `a` is an
    AggCallParams, a dataclass with its fields (the planner's AggCall) or its JSON dict."""
    d = a if isinstance(a, dict) else vars(a)
    args = [names[i] for i in d["args"]]
    inner = ", ".join(args) if args else ("*" if d["name"] == "count" else "")
    if d["distinct"]:
        inner = "DISTINCT " + inner
    text = f"{agg_display_name(d['name'])}({inner})"
    if d["filter"] is not None:
        text += f" FILTER {names[d['filter']]}"
    extra = dict(d.get("params") or {})
    if extra.get("separator") is not None:
        text = text[:-1] + f", '{extra['separator']}')"
    return f"{text} AS {out_name}" if out_name else text
