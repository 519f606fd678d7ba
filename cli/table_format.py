"""Query results as a terminal table that reads like the DuckDB shell's: a box of aligned
columns, the column names on top, numbers right-aligned, NULL shown as NULL, long values cut
(with …) so that the table fits the terminal (given a width: output to a pipe or file keeps every
value whole), and the rows past `max_rows` elided in the middle. With percent=True, the columns
whose name says they are percentages (`time_pct`, `pct_of_path`: the views' x 100 shares, see
docs/sql.md) are shown as "14.5 %".
Control characters in values are shown escaped (printable.terminal_text): strings from traces
cannot move the cursor or forge lines.
"""

from __future__ import annotations

import datetime
import decimal
import re

from ..ingest.printable import terminal_text

_MIN_CUT = 12  # a text column is cut to no fewer characters than this


def cell(value) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.4g}"
    if isinstance(value, datetime.datetime | datetime.date | decimal.Decimal):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cell(v) for v in value) + "]"
    return terminal_text(str(value))  # strings from traces: control characters shown escaped


_PERCENT = re.compile(r"(?<![A-Za-z0-9])pct(?![A-Za-z0-9])")  # a word of a snake_case name


def is_percent(column: str) -> bool:
    return bool(_PERCENT.search(column))


def percent_cell(value) -> str:
    """A percentage (0-100 scale) with one decimal, as nsys prints them; a share too small for
    that keeps two significant digits (0.039 %), never a bare 0.0 for time that was there."""
    if not isinstance(value, int | float | decimal.Decimal) or isinstance(value, bool) or value != value:
        return cell(value)
    v = float(value)
    return f"{v:.1f} %" if v == 0 or abs(v) >= 0.05 else f"{v:.2g} %"


def _is_number(values: list) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool)
                                 for v in present)


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def format_table(columns: list[str], rows: list[tuple], width: int | None = None, max_rows: int = 200,
                 percent: bool = False) -> str:
    """The rows as a box table no wider than `width` characters (None: no limit, values whole)."""
    width = width or 10**9
    shown = rows if len(rows) <= max_rows else [*rows[: max_rows // 2], None, *rows[-(max_rows // 2):]]
    numeric = [_is_number([r[i] for r in rows]) for i in range(len(columns))]
    show = [percent_cell if percent and is_percent(c) else cell for c in columns]
    texts = [None if r is None else [f(v) for f, v in zip(show, r)] for r in shown]
    widths = [max([len(c)] + [len(t[i]) for t in texts if t is not None]) for i, c in enumerate(columns)]
    # cut the widest non-numeric columns until the box fits: 3 characters of border per column, plus 1
    while sum(widths) + 3 * len(widths) + 1 > width:
        candidates = [i for i, n in enumerate(numeric) if not n and widths[i] > max(_MIN_CUT, len(columns[i]))]
        if not candidates:
            break
        i = max(candidates, key=lambda j: widths[j])
        excess = sum(widths) + 3 * len(widths) + 1 - width
        widths[i] = max(widths[i] - excess, _MIN_CUT, len(columns[i]))

    def line(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    def row(values: list[str], align_right: list[bool]) -> str:
        parts = [(_cut(v, w).rjust(w) if r else _cut(v, w).ljust(w)) for v, w, r in zip(values, widths, align_right)]
        return "│ " + " │ ".join(parts) + " │"

    def center(name: str, w: int) -> str:  # as DuckDB: the odd space on the right
        pad = max(w - len(name), 0)
        return " " * (pad // 2) + name + " " * (pad - pad // 2)

    out = [line("┌", "┬", "┐"), row([center(c, w) for c, w in zip(columns, widths)],
                                      [False] * len(columns)), line("├", "┼", "┤")]
    for t in texts:
        out.append(row(["·"] * len(columns), [False] * len(columns)) if t is None else row(t, numeric))
    out.append(line("└", "┴", "┘"))
    if len(rows) != 1:
        out.append(f"{len(rows)} rows" + (f" ({len(shown) - 1} shown)" if len(shown) != len(rows) else ""))
    return "\n".join(out) + "\n"
