"""The `query` tool: one read-only SQL query on the lake (safe SQL's rules, lake/safe_sql.py), its
first rows as a table. A statement that is not a query is refused before anything runs; a query
that reads a file outside the lake fails; one that runs past the time or memory limit is stopped."""

from __future__ import annotations

import json

from ..lake import catalog, safe_sql
from .answer import Answer
from .lake_session import LakeSession
from .refusal import Refusal
from .views import names

DESCRIPTION = (
    "Run one read-only DuckDB SQL query on the lake and get its first rows as a table. Every table and "
    "view of the lake is there (list_views, describe_view); times are integer ns unless a column says "
    "otherwise, and most views have a trace_id column to filter by. Only queries run (SELECT, WITH, "
    "DESCRIBE, SUMMARIZE, EXPLAIN); files outside the lake cannot be read; a query is stopped at the "
    "server's time and memory limits. `offset` skips that many rows of the result (the next page; "
    "with ORDER BY, pages are stable).")
SKIP_CHUNK_ROWS = 10_000  # rows fetched at a time while skipping to `offset`


def query(session: LakeSession, sql: str, offset: int = 0) -> str:
    refused = safe_sql.refusal(sql)
    if refused:
        raise Refusal(f"refused: {refused}")
    limits = session.limits
    answer = Answer(limits)
    views = sorted(catalog.names_in(sql, set(names())))
    answer.then(f'describe_view("{views[0]}") for what its columns mean' if views
                else "list_views() for the tables and views to query")
    with session.cursor() as cur:
        cur.execute(sql)
        columns = [d[0] for d in cur.description or []]
        skipped = _skip(cur, max(0, offset)) if columns else 0
        rows = cur.fetchmany(limits.max_rows + 1) if columns else []
    if not columns or skipped < offset:
        answer.line(f"the result has {skipped} rows, none after offset {offset}" if columns else "no result")
        return answer.text()
    more = len(rows) > limits.max_rows
    rows = rows[: limits.max_rows]
    if offset:
        answer.line(f"rows {offset + 1} to {offset + len(rows)} of the result")
    answer.table(columns, rows, more, f"query({json.dumps(sql)}, offset={offset + len(rows)})")
    if not more:
        total = offset + len(rows)
        answer.line(f"{total} row{'' if total == 1 else 's'} in all")
    return answer.text()


def _skip(cur, offset: int) -> int:
    """Fetch and drop the first `offset` rows of the result; returns how many there were."""
    skipped = 0
    while skipped < offset:
        got = len(cur.fetchmany(min(SKIP_CHUNK_ROWS, offset - skipped)))
        if not got:
            break
        skipped += got
    return skipped
