"""Safe SQL (`tracelake sql --safe`, the MCP server): a query may read the lake and nothing else,
and write nothing.

By default `tracelake sql` runs the user's SQL with the user's rights, as the duckdb CLI would:
the database is opened read-only, but `COPY ... TO`, `read_csv('/any/file')` or `ATTACH` reach
any file the user can. Safe SQL (for SQL that comes from someone else, e.g. a shared notebook, a
web form or an agent) adds two locks:
- only read statements run (SELECT, including DESCRIBE/SHOW/SUMMARIZE, and EXPLAIN of a read
  statement: `EXPLAIN ANALYZE` runs what it explains): COPY, EXPORT, ATTACH, INSTALL/LOAD, SET,
  PRAGMA and the rest are refused before anything runs;
- DuckDB's file access is limited to the lake folder (`allowed_directories`, then
  `enable_external_access = false`), no extension is installed or loaded on demand, and
  `lock_configuration = true` keeps the query from undoing any of it.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

READ_STATEMENTS = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}
# what precedes the explained statement: comments, then EXPLAIN, EXPLAIN ANALYZE or EXPLAIN (option, ...)
_EXPLAIN = re.compile(r"^(?:\s+|--[^\n]*|/\*.*?\*/)*EXPLAIN\s+(?:ANALY[SZ]E\s+|\([^)]*\)\s*)?", re.I | re.S)


def refusal(query: str) -> str | None:
    """Why the query may not run in safe mode, or None."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error:
        return None  # a syntax error: running it reports it
    for statement in statements:
        if statement.type not in READ_STATEMENTS:
            kind = statement.type.name if hasattr(statement.type, "name") else str(statement.type)
            return f"only queries (SELECT, EXPLAIN) may run; refused {_a(kind)} statement"
        if statement.type == duckdb.StatementType.EXPLAIN:
            why = _explained_refusal(statement.query)
            if why:
                return why
    return None


def _explained_refusal(text: str) -> str | None:
    """Why an EXPLAIN statement may not run: what it explains is no query (or cannot be told)."""
    inner = _EXPLAIN.sub("", text, count=1)
    try:
        explained = duckdb.extract_statements(inner) if inner != text else []
    except duckdb.Error:
        explained = []
    if len(explained) != 1:
        return "only EXPLAIN of a query may run; refused an EXPLAIN whose statement could not be read"
    if explained[0].type != duckdb.StatementType.SELECT:
        return f"only EXPLAIN of a query may run; refused an EXPLAIN of {_a(explained[0].type.name)} statement"
    return None


def _a(kind: str) -> str:
    return f"{'an' if kind[:1] in 'AEIOU' else 'a'} {kind}"


def restrict(con, lake: Path) -> None:
    """Limit `con`'s file access to the lake folder and load no extension, for good."""
    con.execute("SET allowed_directories = ?", [[str(lake) + "/"]])
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
