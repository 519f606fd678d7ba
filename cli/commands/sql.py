"""`tracelake sql --lake DIR QUERY`: one query over the lake's tables and views."""

from __future__ import annotations

import sys
from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..peak_option import add_peak_option
from ..terminal import say

NAME = "sql"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="run a SQL query on a lake",
                       description="Run one SQL query with every tracelake table and view available.",
                       epilog="Example: tracelake sql --lake lake/ \"SELECT name, count(*) FROM kernels GROUP BY 1\"")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")
    s.add_argument("--safe", action="store_true",
                   help="refuse anything but queries, and any file access outside the lake (default: the "
                        "query runs with your rights, like the duckdb CLI: COPY ... TO can write files)")
    s.add_argument("query", metavar="QUERY")
    add_peak_option(s)


def run(args) -> int:
    import duckdb

    from ...lake import catalog, safe_sql
    from ..lake_access import open_lake
    from ..output import write_result

    # safe: its locked settings bind no other connection; the materialized views the query evaluates
    con = open_lake(args.lake, private=args.safe, reads=catalog.materialized_reads(args.query))
    if con is None:
        return EXIT_USAGE
    try:
        if args.safe:
            refused = safe_sql.refusal(args.query)
            if refused:
                say(f"error  --safe: {refused}", err=True)
                return EXIT_USAGE
            safe_sql.restrict(con, Path(args.lake).resolve())
        rel = con.sql(args.query)
        write_result(rel, args.format, sys.stdout)
    except duckdb.Error as e:
        say(f"error  {(str(e).strip().splitlines() or [type(e).__name__])[0]}", err=True)
        return EXIT_USAGE
    finally:
        con.close()
    return EXIT_OK
