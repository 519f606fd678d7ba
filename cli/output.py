"""Printing query results as a table, CSV or JSON.

Strings from traces are untrusted: the table format, and any format written to a terminal, shows
control characters escaped (printable.terminal_text), so a kernel or file name cannot move the
cursor or forge lines. CSV and JSON written to a file or a pipe keep the values exactly.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

from ..ingest.printable import terminal_text
from .table_format import format_table

if TYPE_CHECKING:
    import polars as pl

_CONTROL = r"[\x00-\x1f\x7f-\x9f\x{200e}\x{200f}\x{202a}-\x{202e}\x{2066}-\x{2069}]"


def _escaped(frame: pl.DataFrame) -> pl.DataFrame:
    """String (and list-of-string) columns with control characters escaped, where there are any."""
    import polars as pl

    changes = []
    for name, dtype in frame.schema.items():
        if dtype == pl.String and frame[name].str.contains(_CONTROL).any():
            changes.append(pl.col(name).map_elements(terminal_text, return_dtype=pl.String))
        elif dtype == pl.List(pl.String) and frame[name].explode().str.contains(_CONTROL).any():
            changes.append(pl.col(name).map_elements(lambda v: [None if s is None else terminal_text(s) for s in v],
                                                     return_dtype=pl.List(pl.String)))
    return frame.with_columns(changes) if changes else frame


def flat(frame: pl.DataFrame) -> pl.DataFrame:
    """List and struct columns as their JSON text: CSV holds no nested values (run_overview.trace_ids)."""
    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(pl.Series(name, [None if v is None else json.dumps(v, default=str)
                                               for v in frame[name].to_list()], pl.String) for name in nested)


def is_terminal(out) -> bool:
    return hasattr(out, "isatty") and out.isatty()


def table_width(out) -> int | None:
    """The width a table written to `out` must fit: the terminal's; None (no limit) for a pipe or file."""
    return shutil.get_terminal_size((120, 24)).columns if is_terminal(out) else None


def write_result(result, fmt: str, out, percent: bool = False) -> None:
    """`result` is a DuckDB relation (None for statements without rows, which print nothing).
    A table fits the terminal it is written to; written to a pipe or a file it keeps every value
    whole. percent: percentage columns shown as "14.5 %" in a table (format_table)."""
    if result is None:
        return
    if fmt == "table":  # no polars: a one-query process does not import it (0.15 s)
        out.write(format_table(result.columns, result.fetchall(), table_width(out), percent=percent))
        return
    frame = result.pl()
    if is_terminal(out):
        frame = _escaped(frame)
    if fmt == "csv":
        out.write(flat(frame).write_csv())
    else:
        out.write(frame.write_json() + "\n")
