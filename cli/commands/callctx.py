"""`tracelake callctx --lake DIR --trace ID`: a trace's calling-context tree for flame-graph tools."""

from __future__ import annotations

import sys
from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_USAGE

NAME = "callctx"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="export a trace's calling-context tree (folded stacks or speedscope JSON)",
                       description="GPU time by calling context (Python frames > operators > kernels, or the native "
                                   "backtrace; or NVTX/annotation ranges) for flame-graph tools.",
                       epilog="Example: tracelake callctx --lake lake/ --trace rank0 --format speedscope -o rank0.json")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--trace", required=True, metavar="ID", help="trace id (or a unique prefix of one)")
    s.add_argument("--format", choices=["folded", "speedscope"], default="folded")
    s.add_argument("--tree", choices=["stack", "nvtx"], default="stack",
                   help="stack: code that launched the work (default); nvtx: NVTX ranges / user annotations")
    s.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")


def run(args) -> int:
    from ...analysis import callctx_export
    from ...ingest.printable import terminal_lines
    from ..lake_access import open_lake, resolve_trace

    con = open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    try:
        trace_id = resolve_trace(con, args.trace)
        if trace_id is None:
            return EXIT_USAGE
        if args.format == "folded":
            data = callctx_export.folded(con, trace_id, args.tree).encode()
        else:
            data = callctx_export.speedscope(con, trace_id, args.tree)
    finally:
        con.close()
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        if sys.stdout.isatty():  # frame and kernel names come from the trace: escaped on a terminal
            data = terminal_lines(data.decode("utf-8", "replace")).encode()
        sys.stdout.buffer.write(data)
    return EXIT_OK
