"""`tracelake report --lake DIR -o OUT.html`: the HTML page of one trace (and its e-mail), or an index
page of several with their pages (jobs/report_job.py renders both)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..limit_options import add_memory_option
from ..option_help import EXPORT_HELP
from ..peak_option import add_peak_option
from ..terminal import say

NAME = "report"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="write HTML reports (one trace, or an index of several with their pages)",
                       description="Self-contained static HTML: inline CSS and SVG charts (PNG in the --eml mail), "
                                   "no JavaScript, no network. With an index page, a lake that keeps no derived "
                                   "tables yet is derived first (as relink does).",
                       epilog="Example: tracelake report --lake lake/ --trace rank0 -o rank0.html")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--trace", action="append", metavar="ID", help="trace id or unique prefix (repeatable)")
    s.add_argument("-o", "--output", required=True, metavar="OUT.html")
    s.add_argument("--eml", metavar="OUT.eml", help="also write the report of one trace as an e-mail (charts as "
                   "attached PNGs); needs one --trace unless the lake holds a single trace")
    s.add_argument("--export", action="store_true", help=EXPORT_HELP)
    add_memory_option(s)
    add_peak_option(s)


def run(args) -> int:
    from ..lake_access import open_lake, resolve_trace

    # an index page: its cross-run views want derived tables (every view)
    con = open_lake(args.lake, reads=None if len(args.trace or []) != 1 and not args.eml else ())
    if con is None:
        return EXIT_USAGE
    # the reports pull in Altair and vl-convert: imported here, not at every command's start-up
    from ...jobs.report_job import write_reports, write_trace_report
    from ...jobs.trace_export import page_export_path

    try:
        resolved = [resolve_trace(con, wanted) for wanted in args.trace or []]
        chosen = [t for t in resolved if t is not None]
        if len(chosen) < len(resolved):
            return EXIT_USAGE
        if args.eml and not chosen:  # a lake of one trace: that one
            chosen = [r[0] for r in con.execute("SELECT trace_id FROM traces").fetchall()]
            if len(chosen) != 1:
                print(f"error  --eml needs exactly one --trace: the lake holds {len(chosen)} traces", file=sys.stderr)
                return EXIT_USAGE
        out = Path(args.output)
        if len(chosen) == 1:
            write_trace_report(con, chosen[0], out, eml=Path(args.eml) if args.eml else None, export=args.export)
        else:
            if args.eml:
                print("error  --eml needs exactly one --trace (an index page links to other files)", file=sys.stderr)
                return EXIT_USAGE
            write_reports(con, out.with_name(out.stem + "_files"), chosen or None, index=out, export=args.export)
    finally:
        con.close()
    say(str(out.resolve()))
    if args.export and len(chosen) == 1:
        say(str(page_export_path(out).resolve()))
    if args.eml:  # written (an --eml that cannot be has returned above)
        say(str(Path(args.eml).resolve()))
    return EXIT_OK
