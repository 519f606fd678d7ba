"""Printing query results as a table, CSV or JSON."""

from __future__ import annotations


def write_result(result, fmt: str, out) -> None:
    """`result` is a DuckDB relation (None for statements without rows, which print nothing)."""
    if result is None:
        return
    import polars as pl  # here, not at start-up: a `tracelake sql` process pays for it only with rows to print

    frame = result.pl()
    if fmt == "csv":
        out.write(frame.write_csv())
    elif fmt == "json":
        out.write(frame.write_json() + "\n")
    else:
        with pl.Config(tbl_rows=200, tbl_cols=-1, fmt_str_lengths=80, tbl_width_chars=200,
                       tbl_hide_dataframe_shape=False, thousands_separator=False):
            out.write(f"{frame}\n")
