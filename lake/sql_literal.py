"""Text as a SQL string literal (DuckDB's and SQLite's quoting: single quotes, doubled inside), for
the file paths and trace ids that tracelake writes into statements."""

from __future__ import annotations


def sql_string(text: str) -> str:
    """'it''s' for it's."""
    return "'" + text.replace("'", "''") + "'"
