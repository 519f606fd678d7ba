"""`tracelake whatif --lake DIR`: each step's critical path with some of its edges shortened."""

from __future__ import annotations

import sys

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..terminal import say

NAME = "whatif"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="each step's critical path if some of its edges were shortened (CUDA graphs, ...)",
                       description="Re-run each step's longest path with some of its edges shortened (Holistic "
                                   "Trace Analysis' critical-path simulation). Without --scale: the standard "
                                   "scenarios (the step as a CUDA graph, launches as a CUDA graph, CPU time halved, "
                                   "...; --list says what each removes). --scale CLASS=FACTOR scales the edges of "
                                   "a class: cpu, data_loading, launch_overhead, kernel_to_kernel, gpu_compute, "
                                   "communication, memcpy, sync_wait.",
                       epilog="Example: tracelake whatif --lake lake/ --scale kernel_to_kernel=0 "
                              "--scale launch_overhead=0.5")
    s.add_argument("--lake", metavar="DIR", help="required unless --list")
    s.add_argument("--trace", metavar="ID", help="trace id (or a unique prefix of one); default: every trace")
    s.add_argument("--scale", action="append", metavar="CLASS=FACTOR", help="repeatable; 0 removes the class")
    s.add_argument("--list", action="store_true", help="print the standard scenarios and what each removes")
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")


def run(args) -> int:
    from ...analysis import critpath_whatif
    from ..lake_access import open_lake, resolve_trace
    from ..output import write_result

    if args.list:
        import duckdb
        import polars as pl

        table = pl.DataFrame({"scenario": [s.label for s in critpath_whatif.STANDARD_SCENARIOS],
                              "definition": [s.definition for s in critpath_whatif.STANDARD_SCENARIOS]})
        write_result(duckdb.connect().from_arrow(table.to_arrow()), args.format, sys.stdout)
        return EXIT_OK
    if not args.lake:
        say("error  whatif needs --lake DIR (or --list)", err=True)
        return EXIT_USAGE
    try:
        scenarios = ([critpath_whatif.parse_scale(args.scale)] if args.scale
                     else list(critpath_whatif.STANDARD_SCENARIOS))
    except ValueError as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    con = open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    try:
        trace_ids = None
        if args.trace:
            trace_id = resolve_trace(con, args.trace)
            if trace_id is None:
                return EXIT_USAGE
            trace_ids = [trace_id]
        frame = critpath_whatif.whatif(con, scenarios, trace_ids)
        write_result(con.from_arrow(frame.to_arrow()), args.format, sys.stdout)
    finally:
        con.close()
    return EXIT_OK
