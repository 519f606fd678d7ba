"""`tracelake ingest PATH... --lake DIR`: trace files into a lake, one line per file."""

from __future__ import annotations

from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED
from ..limit_options import add_limit_options, add_memory_option, limits_of
from ..option_help import NO_WAIT_HELP
from ..terminal import say

NAME = "ingest"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="ingest trace files into a lake",
                       description="Ingest Nsight Systems SQLite exports (.sqlite, .sqlite.gz) and PyTorch profiler "
                                   "traces (.json, .json.gz) into a Parquet lake. Directories are searched recursively.",
                       epilog="Example: tracelake ingest traces/ run42/rank0.pt.trace.json.gz --lake lake/")
    s.add_argument("paths", nargs="+", metavar="PATH", help="trace files or directories")
    s.add_argument("--lake", required=True, metavar="DIR", help="lake directory (created if missing)")
    s.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)
    add_limit_options(s)
    add_memory_option(s)


def run(args) -> int:
    from ...jobs.ingest_job import ingest_paths
    from ...lake.database import DB_FILE

    def report(o):
        if o.status == "ok":
            if not args.quiet:
                say(f"ok     {o.path} -> {o.trace_id} ({o.events:,} events, {o.seconds:.2f} s)")
                for w in o.warnings:
                    say(f"       warning: {w}")
        elif o.status == "skipped":
            if not args.quiet:
                say(f"skip   {o.error}")
        else:
            say(f"error  {o.error}", err=True)

    outcomes = ingest_paths(args.paths, args.lake, report, limits_of(args))
    if not outcomes:
        say(f"error  no trace files found under: {' '.join(args.paths)}", err=True)
        return EXIT_SOME_FAILED
    failed = sum(o.status == "error" for o in outcomes)
    skipped = sum(o.status == "skipped" for o in outcomes)
    if not args.quiet:
        say(f"{len(outcomes) - failed - skipped} ingested, {failed} failed"
            + (f", {skipped} skipped (not traces)" if skipped else "")
            + f"; lake: {Path(args.lake).resolve()} (query: duckdb {Path(args.lake).resolve() / DB_FILE})")
    return EXIT_SOME_FAILED if failed else EXIT_OK
