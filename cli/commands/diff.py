"""`tracelake diff BASE NEW`: what changed between two traces or runs, why, and whether it is real;
with --fail-if, a CI gate (docs/diff.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from ..terminal import say

NAME = "diff"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="what changed between two traces or runs, why, and is it real (a CI gate)",
                       description="Compare the steady-state step time of BASE and NEW (median, p90, spread; a change "
                                   "within the step-to-step noise is said to be so) and list its causes, largest first, "
                                   "in ns per steady step: kernels, operators, precision, host syncs, GPU idle, memory "
                                   "copies, communication. Each side is a trace file, a folder of rank files (a run), "
                                   "or with --lake a trace id, unique prefix or run id. Exit 1 when a --fail-if "
                                   "condition holds, 2 on bad input (docs/diff.md).",
                       epilog="Example: tracelake diff yesterday/ today/ --fail-if 'step_time > +5%' "
                              "--fail-if 'kernel:* > +10%' --fail-if 'idle > +2ms'")
    s.add_argument("base", metavar="BASE")
    s.add_argument("new", metavar="NEW")
    s.add_argument("--lake", metavar="DIR", help="read ids from (and ingest files into) this lake")
    s.add_argument("--format", choices=["table", "csv", "json", "html"], default="table",
                   help="html: a page in the report style (needs -o)")
    s.add_argument("-o", "--output", metavar="FILE", help="write the output to FILE instead of standard output")
    s.add_argument("--eml", metavar="FILE", help="also write the HTML page as an e-mail (.eml) for `tracelake mail`")
    s.add_argument("--fail-if", action="append", metavar="EXPR",
                   help="repeatable: METRIC OP VALUE, e.g. 'step_time > +5%%', 'kernel:* > +10%%', 'idle > +2ms', "
                        "'sync > +500us' (metrics: step_time, p90, kernel, operator, precision, sync, idle, memcpy, "
                        "communication; KIND:PATTERN matches cause names)")
    s.add_argument("--noise-floor", type=float, metavar="PCT",
                   help="a step-time change under PCT %% of the base's median step is within noise: two "
                        "recordings of one program differ by about 1 %% (default: 2)")


def run(args) -> int:
    import io

    from ...analysis import diff_gate, diff_noise
    from ...ingest.printable import terminal_lines
    from ...jobs.diff import DiffInputError
    from ...jobs.diff import diff as compare
    from ...lake.version import __version__
    from ...reports.render import diff_report
    from ..diff_output import as_csv, as_json, as_table

    page = args.format == "html" or args.eml
    if args.format == "html" and not args.output:
        say("error  --format html needs -o FILE.html", err=True)
        return EXIT_USAGE
    try:
        conditions = [diff_gate.parse(text) for text in args.fail_if or []]
        floor = diff_noise.FLOOR_PCT if args.noise_floor is None else args.noise_floor
        if not 0 <= floor < 100:
            raise DiffInputError(f"--noise-floor {floor:g}: not a percentage in [0, 100)")
        result = compare(args.base, args.new, lake=args.lake, summaries=bool(page), noise_floor_pct=floor)
    except (diff_gate.BadCondition, DiffInputError) as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    html = diff_report(result, version=__version__) if page else ""  # the page: of --format html and --eml
    if args.format == "html":
        text = html
    elif args.format == "json":
        text = as_json(result)
    elif args.format == "csv":
        out = io.StringIO()
        as_csv(result, out)
        text = out.getvalue()
    else:
        import shutil  # not output.table_width: it loads polars, a third of a lake diff's time

        tty = sys.stdout.isatty() and not args.output
        text = (terminal_lines(as_table(result, shutil.get_terminal_size((120, 24)).columns)) if tty
                else as_table(result, None))
    try:
        if args.output:
            Path(args.output).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
        if args.eml:
            from ...reports.email import build_message

            Path(args.eml).write_bytes(build_message(html, f"tracelake diff: {args.base} vs {args.new}").as_bytes())
    except OSError as e:
        say(f"error  writing {e.filename}: {e.strerror}", err=True)
        return EXIT_USAGE
    outcomes = [o for o in (diff_gate.check(c, result) for c in conditions) if o]
    for o in outcomes:
        say(f"{'FAIL  ' if o.failed else 'UNSURE'} {o.line}", err=True)
    return EXIT_SOME_FAILED if any(o.failed for o in outcomes) else EXIT_OK
