"""`tracelake mcp --lake DIR`: the lake's Model Context Protocol server on stdio (serve/, docs/mcp.md).
Its options and what it does; nothing here prints to standard output, which carries the protocol."""

from __future__ import annotations

import argparse

from ...serve.limits import Limits
from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..terminal import say

NAME = "mcp"
MISSING_SDK = "error  tracelake mcp needs the MCP SDK: pip install 'tracelake[mcp]'"
MIN_CHARS = 2_000  # an answer's fixed lines (a headline's, the `next:` calls) fit


def add_parser(sub) -> None:
    d = Limits()
    s = sub.add_parser(NAME, help="serve a lake to AI agents: a read-only Model Context Protocol server on stdio",
                       description="A Model Context Protocol server on standard input and output, for agents such "
                                   "as Claude Code or Claude Desktop: its tools list the lake's traces and views, "
                                   "run read-only queries, and give a trace's headline, a diff and where to look "
                                   "in Perfetto, each answer bounded (docs/mcp.md). The tools write nothing.",
                       epilog="Example: tracelake mcp --lake /data/lake   (as a client starts it; a client's "
                              "configuration: {\"mcpServers\": {\"tracelake\": {\"command\": \"tracelake\", "
                              "\"args\": [\"mcp\", \"--lake\", \"/data/lake\"]}}})")
    s.add_argument("--lake", required=True, metavar="DIR", help="the lake to serve, read-only")
    s.add_argument("--max-rows", type=_at_least(int, 1), default=d.max_rows, metavar="N",
                   help=f"rows of a table in an answer (default {d.max_rows})")
    s.add_argument("--max-chars", type=_at_least(int, MIN_CHARS), default=d.max_chars, metavar="N",
                   help=f"characters of an answer, at least {MIN_CHARS:,} (default {d.max_chars:,})")
    s.add_argument("--time-limit", type=_at_least(float, 0.1), default=d.time_limit_s, metavar="SECONDS",
                   help=f"a tool call's queries are stopped after this long (default {d.time_limit_s:g})")
    s.add_argument("--memory-limit", default=d.memory_limit, metavar="SIZE",
                   help=f"DuckDB's memory for the queries, a size (4GB) or a share of the machine's (default "
                        f"{d.memory_limit.replace('%', '%%')}); a query that needs more stops (nothing spills to disk)")


def _at_least(kind, minimum):
    def parse(text: str):
        value = kind(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text}: less than {minimum:g}")
        return value

    return parse


def run(args) -> int:
    import duckdb

    try:
        from ...serve.server import serve
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "mcp":
            raise
        say(MISSING_SDK, err=True)
        return EXIT_USAGE
    from ...serve.lake_session import LakeSession

    limits = Limits(max_rows=args.max_rows, max_chars=args.max_chars, time_limit_s=args.time_limit,
                    memory_limit=args.memory_limit)
    try:
        session = LakeSession(args.lake, limits)
    except FileNotFoundError as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    except duckdb.Error as e:  # a --memory-limit DuckDB does not take
        say(f"error  --memory-limit {args.memory_limit}: {str(e).splitlines()[0]}", err=True)
        return EXIT_USAGE
    if session.traces_not_derived:
        say(f"warning  {session.traces_not_derived} traces of the lake keep no derived views: queries of them "
            f"evaluate the views each time; `tracelake relink --lake {session.path}` derives them once", err=True)
    say(f"tracelake mcp: serving {session.path} on stdio, read-only", err=True)
    try:
        serve(session)
    finally:
        session.close()
    return EXIT_OK
