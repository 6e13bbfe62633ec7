"""Append-only columnar row storage for join state: chunks merged like a base-4 counter.

The regular join appends the new distinct rows of every input batch to its side's stored
values and gathers rows by position when it emits. Concatenating all chunks into one
array before each gather costs O(stored rows) per batch, O(n^2) over a run: it was most
of Nexmark q23's time. `ChunkedColumns` keeps the chunks instead, each with a
level, and merges the last `FANOUT` chunks whenever they share a level (a base-4 counter),
so there are O(log n) chunks and every row is copied log4(n / batch) times in total (a
binary counter copied twice as much, for fewer chunks per gather). A gather resolves each
position to its chunk with one `searchsorted`, takes per chunk and restores the requested
order with one more `take` (pyarrow's own ChunkedArray.take is ~70x slower than a flat
take on string columns, so it is not used).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

FANOUT = 4


class ChunkedColumns:
    """Rows stored as a list of column chunks; positions are global row numbers."""

    def __init__(self, types: list[pa.DataType] | None = None) -> None:
        self.types = types
        self.chunks: list[list[pa.Array]] = []
        self.sizes: list[int] = []
        self.levels: list[int] = []
        self.num_rows = 0

    def append(self, cols: list[pa.Array]) -> int:
        """Store these rows (one array per column); returns the position of the first."""
        start = self.num_rows
        n = len(cols[0]) if cols else 0
        if n == 0:
            return start
        if self.types is None:
            self.types = [c.type for c in cols]
        self.chunks.append(list(cols))
        self.sizes.append(n)
        self.levels.append(0)
        self.num_rows += n
        while len(self.levels) >= FANOUT and len(set(self.levels[-FANOUT:])) == 1:
            level = self.levels[-1] + 1
            group = self.chunks[-FANOUT:]
            merged = [pa.concat_arrays([c[i] for c in group]) for i in range(len(group[0]))]
            size = sum(self.sizes[-FANOUT:])
            del self.chunks[-FANOUT:], self.sizes[-FANOUT:], self.levels[-FANOUT:]
            self.chunks.append(merged)
            self.sizes.append(size)
            self.levels.append(level)
        return start

    def columns(self) -> list[pa.Array]:
        """All rows, one array per column (merges the chunks into one)."""
        if len(self.chunks) > 1:
            merged = [pa.concat_arrays([c[i] for c in self.chunks]) for i in range(len(self.chunks[0]))]
            self.chunks, self.sizes = [merged], [self.num_rows]
            self.levels = [max(self.levels)]
        if self.chunks:
            return self.chunks[0]
        return [pa.array([], type=t) for t in self.types or []]

    def replace(self, cols: list[pa.Array]) -> None:
        """Replace every stored row with these (compaction, restore)."""
        n = len(cols[0]) if cols else 0
        self.chunks = [list(cols)] if n else []
        self.sizes = [n] if n else []
        self.levels = [0] if n else []
        self.num_rows = n
        if cols and self.types is None:
            self.types = [c.type for c in cols]

    def take(self, positions: np.ndarray, null: np.ndarray | None = None) -> list[pa.Array]:
        """The rows at these positions; where `null` is set the row is all NULLs."""
        positions = np.asarray(positions, dtype=np.int64)
        if null is not None and not null.any():
            null = None
        if len(self.chunks) <= 1:
            cols = self.columns()
            if null is not None:
                positions = np.where(null, 0, positions)
            idx = pa.array(positions, mask=null, type=pa.int64())
            return [c.take(idx) for c in cols]
        starts = np.cumsum([0] + self.sizes[:-1]).astype(np.int64)
        wanted = positions if null is None else positions[~null]
        which = np.searchsorted(starts, wanted, side="right") - 1
        order = np.argsort(which, kind="stable")
        counts = np.bincount(which, minlength=len(starts))
        local = wanted[order] - starts[which[order]]
        bounds = np.concatenate([[0], np.cumsum(counts)])
        used = [k for k in range(len(starts)) if counts[k]]  # per chunk: O(log n) of them
        parts = [pa.array(local[bounds[k] : bounds[k + 1]], type=pa.int64()) for k in used]
        inverse = np.empty(len(wanted), dtype=np.int64)
        inverse[order] = np.arange(len(wanted), dtype=np.int64)
        if null is not None:
            full = np.zeros(len(positions), dtype=np.int64)
            full[~null] = inverse
            back = pa.array(full, mask=null, type=pa.int64())
        else:
            back = pa.array(inverse, type=pa.int64())
        out = []
        for i in range(len(self.chunks[0])):
            pieces = [self.chunks[k][i].take(p) for k, p in zip(used, parts, strict=True)]
            if not pieces:
                t = self.types[i] if self.types else self.chunks[0][i].type
                pieces = [pa.array([], type=t)]
            gathered = pieces[0] if len(pieces) == 1 else pa.concat_arrays(pieces)
            out.append(gathered.take(back))
        return out

    def nbytes(self) -> int:
        return sum(a.nbytes for chunk in self.chunks for a in chunk)
