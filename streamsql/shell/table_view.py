"""The full-screen result view of the `table` and `changelog` result modes.

`ResultModel` folds the changelog into what the user sees: in `table` mode the
materialized result (an insert adds a row, a retraction removes one equal row, so updates
show in place of the old row's position at the end); in `changelog` mode every change as a
row with its `op`. `run_result_view` shows the model in a prompt-toolkit Application that
redraws as batches arrive, with paging and a status line (rows, changes, the result's
current watermark, whether the query still runs). `q` or Ctrl-C leaves it and cancels the
query.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from runtime.batch import MAX_WATERMARK, ROW_KIND_NAMES, row_kinds
from runtime.types import Field
from streamsql.printing import NULL_TEXT, _fit, display_width, render_rows

# Changes Flink's changelog result view keeps on screen (the latest ones).
CHANGELOG_VIEW_ROWS = 1000


class ResultModel:
    """The rows on screen. Rendering to text happens once per batch (`render_rows`,
    vectorized per column); folding a retraction is a dict lookup per changed row, which is
    unavoidable for a row-by-row display and is bounded by what a user can read."""

    def __init__(
        self, fields: tuple[Field, ...], time_zone: str, changelog: bool, max_width: int = 30, max_rows: int = 0
    ) -> None:
        self.fields = fields
        # Rows kept (0: all); past it the oldest go first (sql-client.execution.max-table-result.rows).
        self.max_rows = max_rows
        self.time_zone = time_zone
        self.changelog = changelog
        self.max_width = max_width
        self.headers = (["op"] if changelog else []) + [f.name for f in fields]
        self._rows: dict[int, tuple[str, ...]] = {}  # insertion order = display order
        self._index: dict[tuple[str, ...], list[int]] = {}  # row text -> ids of its copies
        self._ids = itertools.count()
        self.changes = 0
        self.widths = [min(display_width(h), max_width) for h in self.headers]
        self.right = ([False] if changelog else []) + [f.type.is_numeric for f in fields]

    def apply(self, batch: pa.RecordBatch) -> None:
        rendered = [
            tuple(NULL_TEXT if v is None else v for v in r) for r in render_rows(batch, self.fields, self.time_zone)
        ]
        kinds = row_kinds(batch)
        self.changes += len(rendered)
        if self.changelog:
            rendered = [(ROW_KIND_NAMES[k], *r) for k, r in zip(kinds, rendered, strict=True)]
            kinds = kinds * 0
        vacated: int | None = None  # the slot a -U freed: the following +U takes it
        for kind, row in zip(kinds, rendered, strict=True):
            if kind == 2 and vacated is not None:
                self._rows[vacated] = row  # an update stays where the old row was
                self._index.setdefault(row, []).append(vacated)
                self._grow(row)
                vacated = None
                continue
            if vacated is not None:
                del self._rows[vacated]
                vacated = None
            if kind in (0, 2):
                rid = next(self._ids)
                self._rows[rid] = row
                self._index.setdefault(row, []).append(rid)
                self._grow(row)
            else:
                ids = self._index.get(row)
                if ids:
                    rid = ids.pop()
                    if not ids:
                        del self._index[row]
                    if kind == 1:
                        vacated = rid
                    else:
                        del self._rows[rid]
        if vacated is not None:
            del self._rows[vacated]
        self._evict()

    def _evict(self) -> None:
        """Drop the oldest rows beyond `max_rows` (Flink's table view keeps the latest ones)."""
        excess = len(self._rows) - self.max_rows if self.max_rows > 0 else 0
        if excess <= 0:
            return
        for rid in list(itertools.islice(self._rows, excess)):
            row = self._rows.pop(rid)
            ids = self._index.get(row)
            if ids is not None and rid in ids:
                ids.remove(rid)
                if not ids:
                    del self._index[row]

    def _grow(self, row: tuple[str, ...]) -> None:
        # Columns only ever widen, so the view does not jitter as rows come and go.
        for i, cell in enumerate(row):
            w = min(display_width(cell), self.max_width)
            if w > self.widths[i]:
                self.widths[i] = w

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[tuple[str, ...]]:
        return list(self._rows.values())

    def format_line(self, cells: tuple[str, ...] | list[str], header: bool = False) -> str:
        parts = []
        for cell, w, r in zip(cells, self.widths, self.right, strict=True):
            cell = _fit(cell, w)
            pad = " " * (w - display_width(cell))
            parts.append(pad + cell if r and not header else cell + pad)
        return " " + " | ".join(parts)


def format_watermark(wm: int | None, time_zone: str) -> str:
    """The watermark as a TIMESTAMP_LTZ(3) string in the session zone."""
    if wm is None:
        return "none"
    if wm >= MAX_WATERMARK:
        return "end of input"
    import datetime
    import zoneinfo

    try:
        zone: datetime.tzinfo = zoneinfo.ZoneInfo(time_zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = datetime.UTC
    try:
        t = datetime.datetime.fromtimestamp(wm / 1000, zone)
    except (OverflowError, OSError, ValueError):
        return str(wm)
    return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{wm % 1000:03d}"


class ResultView:
    """State of one full-screen view: the model, the scroll position and the pump."""

    def __init__(self, result: Any, mode: str, max_width: int = 30, max_rows: int = 0) -> None:
        self.result = result
        changelog = mode == "changelog"
        # Flink's changelog view shows the latest 1000 changes; its table view keeps max_rows.
        self.model = ResultModel(
            result.fields,
            result.time_zone,
            changelog=changelog,
            max_width=max_width,
            max_rows=CHANGELOG_VIEW_ROWS if changelog else max_rows,
        )
        self.top = 0
        self.follow = mode == "changelog"  # changelog mode sticks to the newest change
        self.page = 20
        self.pump: Any = None

    def refresh(self) -> None:
        if self.pump is None:
            return
        for batch in self.pump.drain():
            self.model.apply(batch)

    def status(self) -> str:
        p = self.pump
        if p is not None and p.error is not None:
            state = f"FAILED: {type(p.error).__name__}: {p.error}"
        elif p is not None and p.canceled:
            state = "canceled"
        elif p is not None and p.finished:
            state = "finished"
        else:
            state = "running"
        wm = format_watermark(self.result.current_watermark(), self.result.time_zone)
        return (
            f" {len(self.model)} rows | {self.model.changes} changes | watermark: {wm} | {state}"
            "  [q] quit  [↑↓ PgUp PgDn Home End] scroll"
        )

    def body(self, height: int) -> str:
        self.refresh()
        self.page = max(height - 2, 1)
        rows = self.model.rows()
        last_top = max(len(rows) - self.page, 0)
        if self.follow:
            self.top = last_top
        self.top = min(max(self.top, 0), last_top)
        head = self.model.format_line(self.model.headers, header=True)
        sep = "-" * min(len(head) + 1, 1000)
        visible = rows[self.top : self.top + self.page]
        return "\n".join([head, sep] + [self.model.format_line(r) for r in visible])

    def scroll(self, delta: int) -> None:
        self.follow = False
        self.top += delta

    def end(self) -> None:
        self.follow = True


def run_result_view(
    result: Any,
    mode: str,
    max_width: int = 30,
    input: Any = None,
    output: Any = None,
    on_open: Callable[[ResultView], None] | None = None,
    max_rows: int = 0,
) -> ResultView:
    """Show `result` full-screen until the user leaves; the query is canceled on leaving.
    `on_open(view)` sees the view before it runs. Returns the view (its model holds what
    was on screen)."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    from streamsql.shell.pump import BatchPump

    view = ResultView(result, mode, max_width, max_rows)
    kb = KeyBindings()
    app: Application[None]

    @kb.add("q")
    @kb.add("Q")
    @kb.add("c-c")
    @kb.add("escape", eager=True)
    def _quit(event: Any) -> None:
        event.app.exit()

    @kb.add("down")
    @kb.add("j")
    def _down(event: Any) -> None:
        view.scroll(1)

    @kb.add("up")
    @kb.add("k")
    def _up(event: Any) -> None:
        view.scroll(-1)

    @kb.add("pagedown")
    @kb.add("space")
    @kb.add("c-f")
    def _pgdn(event: Any) -> None:
        view.scroll(view.page)

    @kb.add("pageup")
    @kb.add("b")
    @kb.add("c-b")
    def _pgup(event: Any) -> None:
        view.scroll(-view.page)

    @kb.add("home")
    @kb.add("g")
    def _home(event: Any) -> None:
        view.follow = False
        view.top = 0

    @kb.add("end")
    @kb.add("G")
    def _end(event: Any) -> None:
        view.end()

    def body_text() -> str:
        try:
            rows = app.output.get_size().rows
        except Exception:  # noqa: BLE001 - no terminal size (tests): a default page
            rows = 24
        return view.body(rows - 1)

    layout = Layout(
        HSplit(
            [
                Window(FormattedTextControl(body_text), wrap_lines=False),
                Window(FormattedTextControl(lambda: [("class:status", view.status())]), height=1, style="reverse"),
            ]
        )
    )
    app = Application(
        layout=layout, key_bindings=kb, full_screen=True, refresh_interval=0.5, input=input, output=output
    )
    view.pump = BatchPump(result, on_batch=app.invalidate)
    if on_open is not None:
        on_open(view)
    try:
        app.run()
    finally:
        view.pump.cancel()
        view.refresh()
    return view
