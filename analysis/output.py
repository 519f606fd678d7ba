"""Printing query results as a table, CSV or JSON."""

from __future__ import annotations

import polars as pl


def write_result(result, fmt: str, out) -> None:
    """`result` is a DuckDB relation (None for statements without rows, which print nothing)."""
    if result is None:
        return
    frame = result.pl()
    if fmt == "csv":
        out.write(frame.write_csv())
    elif fmt == "json":
        out.write(frame.write_json() + "\n")
    else:
        with pl.Config(tbl_rows=200, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200,
                       tbl_hide_dataframe_shape=False, thousands_separator=False):
            out.write(f"{frame}\n")
