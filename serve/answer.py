"""A tool's answer: lines and compact tables (Markdown, no padding), bounded in rows and
characters. Every cut is said where it happens, with the call that gives the rest, and the answer
ends with `next:`, the call to make next."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

from .limits import Limits


class Answer:
    def __init__(self, limits: Limits):
        self.limits = limits
        self.lines: list[str] = []
        self.next: list[str] = []

    def line(self, text: str = "") -> None:
        self.lines.append(text)

    def table(self, columns: list[str], rows: list[tuple], more: bool, rest: str | None) -> None:
        """`rows` as a table; `more`: the source had rows after them, which `rest` (a call) gives."""
        self.lines.extend(table_lines(columns, rows, self.limits.cell_chars))
        if more:
            self.lines.append(f"cut: {len(rows)} rows shown, more follow" + (f"; the rest: {rest}" if rest else ""))

    def then(self, call: str) -> None:
        """A call worth making next."""
        self.next.append(call)

    def text(self) -> str:
        """The answer, cut at a line to limits.max_chars (saying so) and ended by its `next:` lines."""
        tail = [f"next: {call}" for call in self.next]
        room = self.limits.max_chars - sum(len(t) + 1 for t in tail) - 200  # 200: the cut's own line
        body = "\n".join(self.lines)
        if len(body) > room:
            kept = body[: max(0, room)].rsplit("\n", 1)[0]
            body = (f"{kept}\ncut: the answer has {len(body):,} characters, the first {len(kept):,} are shown "
                    f"(the server's limit is {self.limits.max_chars:,}); ask for fewer rows or columns")
        return "\n".join([body, *tail]).strip("\n") + "\n"


def table_lines(columns: list[str], rows: list[tuple], cell_chars: int) -> list[str]:
    """A Markdown table: a header, its rule, a line per row; values one line each, cut to cell_chars."""
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out.extend("| " + " | ".join(cell(v, cell_chars) for v in row) + " |" for row in rows)
    return out


def cell(value, width: int) -> str:
    """A value as table text: NULL, integers as they are, floats to 3 decimals, lists and structs as
    JSON; one line, `|` escaped, cut to `width` characters (ending in …)."""
    if value is None:
        text = "NULL"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 1e15 else f"{value:.6g}"
    elif isinstance(value, int | Decimal):
        text = str(value)
    elif isinstance(value, datetime | date):
        text = value.isoformat()
    elif isinstance(value, bytes | bytearray):
        text = f"<{len(value)} bytes>"
    elif isinstance(value, list | tuple | dict):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        text = str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"
