"""`tracelake run DIR... --out OUTDIR`: the batch job (trace directories -> lake, database and HTML
reports; jobs/run_with_reports.py) with its progress lines and summary."""

from __future__ import annotations

import json
import sys

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from ..limit_options import add_limit_options, add_memory_option, limits_of
from ..option_help import EXPORT_HELP, NO_WAIT_HELP
from ..peak_option import add_peak_option
from ..terminal import say

NAME = "run"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="the batch job: trace directories -> lake and database (incremental, parallel)",
                       description="Ingest every trace under the given directories into OUT/lake, in parallel. "
                                   "Re-running skips unchanged files (content hash), re-ingests changed ones and, "
                                   "with --prune, drops traces whose file is gone. Files that are not traces are "
                                   "listed and skipped.",
                       epilog="Example: tracelake run /data/profiles --out results/ --jobs 8 --json > summary.json")
    s.add_argument("paths", nargs="+", metavar="DIR", help="directories (or files) to search for traces")
    s.add_argument("--out", required=True, metavar="OUTDIR", help="output folder; the lake is OUTDIR/lake")
    s.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="cores to keep busy: N worker processes, a thread each (default: all cores)")
    s.add_argument("--prune", action="store_true", help="drop lake entries of files that no longer exist")
    s.add_argument("--executor", choices=["local", "dask"], default="local",
                   help="local: a process pool on this machine (default); dask: a Dask distributed cluster")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, with --executor dask")
    s.add_argument("--no-reports", action="store_true", help="skip the HTML reports (OUTDIR/reports/index.html)")
    s.add_argument("--export", action="store_true", help=EXPORT_HELP)
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)
    add_limit_options(s)
    add_memory_option(s)
    verbosity = s.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    verbosity.add_argument("-v", "--verbose", action="store_true", help="one line per file, warnings too")
    verbosity.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout")
    add_peak_option(s)


def run(args) -> int:
    from ...jobs.run_with_reports import run_with_reports
    from ..progress import Progress

    progress = Progress(quiet=args.quiet or args.json, verbose=args.verbose)
    if args.executor == "dask" and not args.scheduler:
        print("error  --executor dask needs --scheduler ADDRESS (e.g. tcp://scheduler:8786)", file=sys.stderr)
        return EXIT_USAGE
    page_errors: list[dict] = []  # report pages that could not be rendered (the others were)
    try:
        summary, index = run_with_reports(args.paths, args.out, jobs=args.jobs, prune=args.prune,
                                          reports=not args.no_reports, export=args.export, executor=args.executor,
                                          scheduler=args.scheduler, limits=limits_of(args),
                                          on_outcome=progress.update, on_stage=progress.stage,
                                          on_pages=progress.pages, page_errors=page_errors)
    except ImportError:
        print("error  --executor dask needs the dask extra: pip install 'tracelake[dask]'", file=sys.stderr)
        return EXIT_USAGE
    progress.finish(summary, summary.seconds)
    if args.verbose:
        say("stages: " + ", ".join(f"{stage} {s:.1f} s" for stage, s in summary.stage_seconds.items()), err=True)
    for e in page_errors:
        say(f"error  report page of {e['trace_id']}: {e['error']}", err=True)
    if index is not None and not args.quiet and not args.json:
        say(f"reports: {index.resolve()}", err=True)
    if args.json:
        sys.stdout.write(json.dumps({"lake": summary.lake, "seconds": round(summary.seconds, 3),
                                     "stage_seconds": {k: round(v, 3) for k, v in summary.stage_seconds.items()},
                                     "files": summary.files, "report_errors": page_errors}, indent=1) + "\n")
    if not summary.files:
        say(f"error  no trace files found under: {' '.join(args.paths)}", err=True)
        return EXIT_SOME_FAILED
    return EXIT_SOME_FAILED if summary.failed or page_errors else EXIT_OK
