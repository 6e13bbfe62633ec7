"""PyFlink's `Row` and `RowKind` (they live in `runtime.row`, because the runtime hands
ROW values to Python functions as `Row`s, as PyFlink does)."""

from runtime.row import Row, RowKind

__all__ = ["Row", "RowKind"]
