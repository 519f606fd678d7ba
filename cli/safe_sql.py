"""`tracelake sql --safe`: a query may read the lake and nothing else, and write nothing.

By default `tracelake sql` runs the user's SQL with the user's rights, as the duckdb CLI would:
the database is opened read-only, but `COPY ... TO`, `read_csv('/any/file')` or `ATTACH` reach
any file the user can. --safe (for SQL that comes from someone else, e.g. a shared notebook or a
web form) adds two locks:
- only read statements run (SELECT, including DESCRIBE/SHOW/SUMMARIZE, and EXPLAIN): COPY,
  EXPORT, ATTACH, INSTALL/LOAD, SET, PRAGMA and the rest are refused before anything runs;
- DuckDB's file access is limited to the lake folder (`allowed_directories`, then
  `enable_external_access = false` and `lock_configuration = true`, so the query cannot undo it).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

READ_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}


def refusal(query: str) -> str | None:
    """Why the query may not run in safe mode, or None."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error:
        return None  # a syntax error: running it reports it
    for statement in statements:
        if statement.type not in READ_STATEMENTS:
            kind = statement.type.name if hasattr(statement.type, "name") else str(statement.type)
            return f"only queries (SELECT, EXPLAIN) may run; refused a {kind} statement"
    return None


def restrict(con, lake: Path) -> None:
    """Limit `con`'s file access to the lake folder, for good."""
    con.execute("SET allowed_directories = ?", [[str(lake) + "/"]])
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
