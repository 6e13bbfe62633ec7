"""The Table API half of TableEnvironment: tables from paths, descriptors and Python data,
temporary views, statement sets. A mixin so environment.py keeps the SQL entry points.

The Table API's own modules (expressions, descriptors, lowering; ~25 ms) load with the
first Table API call, not with every TableEnvironment: the CLI never needs them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from planner.statements import Drop
from streamsql.sql_text import quote

if TYPE_CHECKING:
    from streamsql.descriptors import TableDescriptor
    from streamsql.statement_set import StatementSet
    from streamsql.table import Table


def _path_sql(path: str) -> str:
    return ".".join(quote(p) for p in _path(path))


def _path(path: str) -> tuple[str, ...]:
    """The parts of a table path as Flink's identifier parser reads them: split on dots, a
    part in backticks kept whole (`` mypg.shop.`sales.orders` ``, a doubled backtick inside)."""
    if "`" not in path:
        return tuple(path.split("."))
    return tuple(
        quoted.replace("``", "`") if bare == "" else bare
        for quoted, bare in re.findall(r"`((?:[^`]|``)*)`|([^.`]+)", path)
    )


class TableApiMixin:
    """Methods of TableEnvironment that build Tables (PyFlink's names)."""

    def from_path(self, path: str) -> Table:
        """A Table scanning a registered table or view."""
        from streamsql.table import Table
        from streamsql.table_lowering import SelectSpec

        self.catalog.lookup(_path(path))  # type: ignore[attr-defined] # fails with "Object 'x' not found"
        t = Table(self, spec=SelectSpec(from_=_path_sql(path), from_is_name=True))  # type: ignore[arg-type]
        t._fields()
        return t

    def create_temporary_table(self, path: str, descriptor: TableDescriptor, ignoreIfExists: bool = False) -> None:  # noqa: N803 - PyFlink's parameter name
        if ignoreIfExists and self.catalog.get(_path(path)) is not None:  # type: ignore[attr-defined]
            return
        self.execute_sql(descriptor.to_ddl(path, temporary=True))  # type: ignore[attr-defined]

    def create_table(
        self,
        path: str,
        descriptor: TableDescriptor,
        ignoreIfExists: bool = False,  # noqa: N803 - PyFlink's parameter name
        *,
        ignore_if_exists: bool | None = None,
    ) -> bool:
        ignore_if_exists = ignoreIfExists if ignore_if_exists is None else ignore_if_exists
        if ignore_if_exists and self.catalog.get(_path(path)) is not None:  # type: ignore[attr-defined]
            return False
        self.execute_sql(descriptor.to_ddl(path, temporary=False, if_not_exists=ignore_if_exists))  # type: ignore[attr-defined]
        return True

    def create_temporary_view(self, view_path: str, table_or_data_stream: Table, *fields_or_schema: Any) -> None:
        """Register a Table under `view_path` (usable from SQL and from_path); with field
        names, its columns are renamed (a DataStream needs PyFlink's DataStream API)."""
        from streamsql.table import Table

        if not isinstance(table_or_data_stream, Table):
            from streamsql.unsupported import DATASTREAM, refuse

            refuse("create_temporary_view of a DataStream", DATASTREAM)
        table = table_or_data_stream
        if fields_or_schema:
            names = [getattr(f, "_column", None) or str(f) for f in fields_or_schema]
            table = table.alias(*names)
        self.execute_sql(f"CREATE TEMPORARY VIEW {_path_sql(view_path)} AS {table.to_sql()}")  # type: ignore[attr-defined]

    def _drop(self, kind: str, path: str) -> bool:
        return bool(self.catalog.drop(Drop(kind=kind, name=_path(path), if_exists=True, temporary=True)))  # type: ignore[attr-defined]

    def drop_temporary_table(self, table_path: str) -> bool:
        return self._drop("TABLE", table_path)

    def drop_temporary_view(self, view_path: str) -> bool:
        return self._drop("VIEW", view_path)

    def list_temporary_tables(self) -> list[str]:
        return [n for n in self.list_tables() if n not in self.list_views()]  # type: ignore[attr-defined]

    def list_temporary_views(self) -> list[str]:
        return list(self.list_views())  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ Python data
    def _from_arrow_table(self, data: Any, schema: Any) -> Table:
        from streamsql.table_sources import register_arrow

        return self.from_path(register_arrow(self, data, schema))

    def from_elements(self, elements: Any, schema: Any = None, verify_schema: bool = True) -> Table:
        """A bounded table of Python rows. `schema`: None (names _1, _2, ... and inferred
        types), a list of names, DataTypes.ROW([...]), or a Schema (may add a watermark)."""
        from streamsql.table_sources import elements_to_arrow

        return self._from_arrow_table(elements_to_arrow(list(elements), schema), schema)

    def from_pandas(self, pdf: Any, schema: Any = None, splits_num: int = 1) -> Table:
        """A bounded table of a pandas DataFrame's rows (schema forms as from_elements)."""
        import pyarrow as pa

        from runtime.pandas_interop import import_pandas

        import_pandas()  # pyarrow's pandas integration on (runtime/pandas_interop.py)
        data = pa.Table.from_pandas(pdf, preserve_index=False)
        if isinstance(schema, (list, tuple)) and all(isinstance(s, str) for s in schema):
            data = data.rename_columns(list(schema))
        return self._from_arrow_table(data, schema)

    def from_arrow(self, data: Any, schema: Any = None) -> Table:
        """A bounded table of a pyarrow Table / RecordBatch / RecordBatchReader (read fully)."""
        from streamsql.table_sources import to_arrow_table

        return self._from_arrow_table(to_arrow_table(data), schema)

    def create_statement_set(self) -> StatementSet:
        from streamsql.statement_set import StatementSet

        return StatementSet(self)  # type: ignore[arg-type]


def visible(names: list[str]) -> list[str]:
    """Catalog names without the hidden tables of from_elements & co."""
    from streamsql.table_sources import HIDDEN_PREFIX

    return [n for n in names if not n.startswith(HIDDEN_PREFIX) and not n.startswith("__sink$")]


__all__ = ["TableApiMixin", "visible"]
