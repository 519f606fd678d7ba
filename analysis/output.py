"""Printing query results as a table (analysis/table_format.py), CSV or JSON."""

from __future__ import annotations

from .table_format import format_table


def write_result(result, fmt: str, out) -> None:
    """`result` is a DuckDB relation (None for statements without rows, which print nothing)."""
    if result is None:
        return
    if fmt == "table":
        out.write(format_table(result.columns, result.fetchall()))
        return
    frame = result.pl()
    if fmt == "csv":
        out.write(frame.write_csv())
    else:
        out.write(frame.write_json() + "\n")
