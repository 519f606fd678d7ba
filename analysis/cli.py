"""The `tracelake` command line. Exit codes: 0 all good, 1 some inputs failed, 2 usage error (or an
output that cannot be written), 130 interrupted (Ctrl-C).

Everything printed that holds a file name or a string from a trace goes through `_say`, which
escapes control characters (printable.terminal_text). File-system errors about outputs and
Ctrl-C end in one line each, in `main`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import duckdb
from tracelake.ingest.printable import has_control, terminal_text
from tracelake.ingest.reading import ENV_MAX_INFLATED, ENV_MAX_RATIO, BadLimits, Limits, parse_size

from . import __version__, callctx_export, fs_errors, run_job, safe_sql
from .ingest_job import FileOutcome, ingest_paths
from .lake import DB_FILE, build_database, connect
from .output import write_result
from .progress import Progress

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _say(text: str, err: bool = False) -> None:
    print(terminal_text(text), file=sys.stderr if err else sys.stdout)


def _limits(args) -> Limits:
    return Limits.from_environment(args.max_inflated, args.max_inflate_ratio)


def _cmd_ingest(args) -> int:
    def report(o: FileOutcome):
        if o.status == "ok":
            if not args.quiet:
                _say(f"ok     {o.path} -> {o.trace_id} ({o.events:,} events, {o.seconds:.2f} s)")
                for w in o.warnings:
                    _say(f"       warning: {w}")
        else:
            _say(f"error  {o.error}", err=True)

    outcomes = ingest_paths(args.paths, args.lake, report, _limits(args))
    if not outcomes:
        _say(f"error  no trace files found under: {' '.join(args.paths)}", err=True)
        return EXIT_SOME_FAILED
    failed = sum(o.status != "ok" for o in outcomes)
    if not args.quiet:
        _say(f"{len(outcomes) - failed} ingested, {failed} failed; lake: {Path(args.lake).resolve()} "
             f"(query: duckdb {Path(args.lake).resolve() / DB_FILE})")
    return EXIT_SOME_FAILED if failed else EXIT_OK


def _open_lake(lake: str):
    """The lake's database connection, or None after printing why there is none."""
    try:
        return connect(lake)
    except FileNotFoundError as e:
        _say(f"error  {e}", err=True)
        return None


def _cmd_sql(args) -> int:
    con = _open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    try:
        if args.safe:
            refused = safe_sql.refusal(args.query)
            if refused:
                _say(f"error  --safe: {refused}", err=True)
                return EXIT_USAGE
            safe_sql.restrict(con, Path(args.lake).resolve())
        rel = con.sql(args.query)
        write_result(rel, args.format, sys.stdout)
    except duckdb.Error as e:
        _say(f"error  {(str(e).strip().splitlines() or [type(e).__name__])[0]}", err=True)
        return EXIT_USAGE
    finally:
        con.close()
    return EXIT_OK


def _cmd_relink(args) -> int:
    if not (Path(args.lake) / "traces").is_dir():
        _say(f"error  {args.lake}: not a tracelake lake (no traces/ folder)", err=True)
        return EXIT_USAGE
    _say(str(build_database(args.lake)))
    return EXIT_OK


def _resolve_trace(con, wanted: str) -> str | None:
    """The trace id equal to `wanted`, or the only one starting with it; None after saying why not."""
    ids = [r[0] for r in con.execute("SELECT trace_id FROM traces").fetchall()]
    matches = [t for t in ids if t == wanted] or [t for t in ids if t.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    print(f"error  --trace {wanted!r} matches {len(matches)} traces; trace ids: {', '.join(sorted(ids)[:20])}",
          file=sys.stderr)
    return None


def _cmd_callctx(args) -> int:
    con = _open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    try:
        trace_id = _resolve_trace(con, args.trace)
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
            data = "\n".join(map(terminal_text, data.decode("utf-8", "replace").split("\n"))).encode()
        sys.stdout.buffer.write(data)
    return EXIT_OK


def _cmd_run(args) -> int:
    progress = Progress(quiet=args.quiet or args.json, verbose=args.verbose)
    if args.executor == "dask" and not args.scheduler:
        print("error  --executor dask needs --scheduler ADDRESS (e.g. tcp://scheduler:8786)", file=sys.stderr)
        return EXIT_USAGE
    try:
        summary = run_job.run(args.paths, args.out, jobs=args.jobs, prune=args.prune, on_outcome=progress.update,
                              executor=args.executor, scheduler=args.scheduler, limits=_limits(args))
    except ImportError:
        print("error  --executor dask needs the dask extra: pip install 'tracelake[dask]'", file=sys.stderr)
        return EXIT_USAGE
    progress.finish(summary)
    if not args.no_reports and summary.files:
        from tracelake.reports.write import write_reports  # Altair and vl-convert: only when needed

        con = connect(Path(args.out) / "lake")
        try:
            fresh = {f["trace_id"] for f in summary.files if f["status"] == "ok"}
            failures = [f for f in summary.files if f["status"] == "error"]
            index = write_reports(con, Path(args.out) / "reports", failures=failures, render_ids=fresh,
                                  jobs=args.jobs)
        finally:
            con.close()
        if not args.quiet and not args.json:
            _say(f"reports: {index.resolve()}", err=True)
    if args.json:
        sys.stdout.write(json.dumps({"lake": summary.lake, "seconds": round(summary.seconds, 3),
                                     "files": summary.files}, indent=1) + "\n")
    if not summary.files:
        _say(f"error  no trace files found under: {' '.join(args.paths)}", err=True)
        return EXIT_SOME_FAILED
    return EXIT_SOME_FAILED if summary.failed else EXIT_OK


def _cmd_report(args) -> int:
    con = _open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    # the reports pull in Altair and vl-convert: imported here, not at every command's start-up
    from tracelake.analysis.lake import connect_scoped
    from tracelake.reports.render import trace_report
    from tracelake.reports.write import lake_path, trace_scopes, write_atomically, write_reports

    try:
        chosen = [_resolve_trace(con, wanted) for wanted in args.trace or []]
        if None in chosen:
            return EXIT_USAGE
        out = Path(args.output)
        if len(chosen) == 1:
            scope = next(iter(trace_scopes(con, chosen)))
            scoped = connect_scoped(lake_path(con), list(scope))
            try:
                page = trace_report(scoped, chosen[0])
            finally:
                scoped.close()
            write_atomically(out, page)
            if args.eml:
                from tracelake.reports.email import build_message

                Path(args.eml).write_bytes(build_message(page, f"tracelake report: {chosen[0]}").as_bytes())
        else:
            if args.eml:
                print("error  --eml needs exactly one --trace (an index page links to other files)", file=sys.stderr)
                return EXIT_USAGE
            write_reports(con, out.with_name(out.stem + "_files"), chosen or None, index=out)
    finally:
        con.close()
    _say(str(out.resolve()))
    return EXIT_OK


def _cmd_mail(args) -> int:
    import email
    import email.policy
    import os
    import smtplib

    from tracelake.reports.email import send

    for option, address in [("--from", args.sender)] + [("--to", a) for a in args.to]:
        if has_control(address):
            _say(f"error  {option} {address}: an address cannot hold line breaks or other control characters",
                 err=True)
            return EXIT_USAGE
    host, _, port = args.smtp.rpartition(":")
    if not host or not port.isdigit():
        print(f"error  --smtp {args.smtp!r}: expected HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    try:
        msg = email.message_from_bytes(Path(args.eml).read_bytes(), policy=email.policy.SMTP)
    except OSError as e:
        _say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    del msg["From"], msg["To"]
    msg["From"], msg["To"] = args.sender, ", ".join(args.to)
    try:
        send(msg.as_bytes(), host, int(port), args.sender, args.to, args.starttls, args.user,
             os.environ.get("TRACELAKE_SMTP_PASSWORD"))
    except (OSError, smtplib.SMTPException) as e:
        _say(f"error  sending {args.eml} via {args.smtp}: {e}", err=True)
        return EXIT_SOME_FAILED
    _say(f"sent {args.eml} to {', '.join(args.to)}")
    return EXIT_OK


def _size(text: str) -> str:
    parse_size(text)  # argparse reports the ValueError as a usage error
    return text


def _limit_options(s) -> None:
    default = Limits()
    s.add_argument("--max-inflated", type=_size, metavar="SIZE",
                   help=f"largest text a gzip file may inflate to, or a JSON file may hold (default "
                        f"{default.max_inflated_bytes >> 30}G, or ${ENV_MAX_INFLATED})")
    s.add_argument("--max-inflate-ratio", type=int, metavar="N",
                   help=f"largest inflated / compressed size of a gzip file above "
                        f"{default.ratio_floor_bytes >> 20} MiB (default {default.max_inflate_ratio}, or ${ENV_MAX_RATIO})")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracelake", description="Offline analysis of GPU deep-learning traces.")
    p.add_argument("--version", action="version", version=f"tracelake {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("ingest", help="ingest trace files into a lake",
                       description="Ingest Nsight Systems SQLite exports (.sqlite, .sqlite.gz) and PyTorch profiler "
                                   "traces (.json, .json.gz) into a Parquet lake. Directories are searched recursively.",
                       epilog="Example: tracelake ingest traces/ run42/rank0.pt.trace.json.gz --lake lake/")
    s.add_argument("paths", nargs="+", metavar="PATH", help="trace files or directories")
    s.add_argument("--lake", required=True, metavar="DIR", help="lake directory (created if missing)")
    s.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    _limit_options(s)
    s.set_defaults(func=_cmd_ingest)

    s = sub.add_parser("sql", help="run a SQL query on a lake",
                       description="Run one SQL query with every tracelake table and view available.",
                       epilog="Example: tracelake sql --lake lake/ \"SELECT name, count(*) FROM kernels GROUP BY 1\"")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")
    s.add_argument("--safe", action="store_true",
                   help="refuse anything but queries, and any file access outside the lake (default: the "
                        "query runs with your rights, like the duckdb CLI: COPY ... TO can write files)")
    s.add_argument("query", metavar="QUERY")
    s.set_defaults(func=_cmd_sql)

    s = sub.add_parser("relink", help="rebuild a lake's tracelake.duckdb (after moving the lake folder)",
                       epilog="Example: tracelake relink --lake /new/place/lake")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.set_defaults(func=_cmd_relink)

    s = sub.add_parser("callctx", help="export a trace's calling-context tree (folded stacks or speedscope JSON)",
                       description="GPU time by calling context (Python frames > operators > kernels, or the native "
                                   "backtrace; or NVTX/annotation ranges) for flame-graph tools.",
                       epilog="Example: tracelake callctx --lake lake/ --trace rank0 --format speedscope -o rank0.json")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--trace", required=True, metavar="ID", help="trace id (or a unique prefix of one)")
    s.add_argument("--format", choices=["folded", "speedscope"], default="folded")
    s.add_argument("--tree", choices=["stack", "nvtx"], default="stack",
                   help="stack: code that launched the work (default); nvtx: NVTX ranges / user annotations")
    s.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")
    s.set_defaults(func=_cmd_callctx)

    s = sub.add_parser("run", help="the batch job: trace directories -> lake and database (incremental, parallel)",
                       description="Ingest every trace under the given directories into OUT/lake, in parallel. "
                                   "Re-running skips unchanged files (content hash), re-ingests changed ones and, "
                                   "with --prune, drops traces whose file is gone. Files that are not traces are "
                                   "listed and skipped.",
                       epilog="Example: tracelake run /data/profiles --out results/ --jobs 8 --json > summary.json")
    s.add_argument("paths", nargs="+", metavar="DIR", help="directories (or files) to search for traces")
    s.add_argument("--out", required=True, metavar="OUTDIR", help="output folder; the lake is OUTDIR/lake")
    s.add_argument("--jobs", type=int, default=None, metavar="N", help="worker processes (default: all cores)")
    s.add_argument("--prune", action="store_true", help="drop lake entries of files that no longer exist")
    s.add_argument("--executor", choices=["local", "dask"], default="local",
                   help="local: a process pool on this machine (default); dask: a Dask distributed cluster")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, with --executor dask")
    s.add_argument("--no-reports", action="store_true", help="skip the HTML reports (OUTDIR/reports/index.html)")
    _limit_options(s)
    verbosity = s.add_mutually_exclusive_group()
    verbosity.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    verbosity.add_argument("-v", "--verbose", action="store_true", help="one line per file, warnings too")
    verbosity.add_argument("--json", action="store_true", help="print a machine-readable summary on stdout")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("report", help="write HTML reports (one trace, or an index of several with their pages)",
                       description="Self-contained static HTML: inline CSS and PNG charts, no JavaScript, no network.",
                       epilog="Example: tracelake report --lake lake/ --trace rank0 -o rank0.html")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--trace", action="append", metavar="ID", help="trace id or unique prefix (repeatable)")
    s.add_argument("-o", "--output", required=True, metavar="OUT.html")
    s.add_argument("--eml", metavar="OUT.eml", help="also write the report as an e-mail (charts as attached PNGs)")
    s.set_defaults(func=_cmd_report)

    s = sub.add_parser("mail", help="send a report .eml file by SMTP",
                       description="Send an .eml written by `tracelake report --eml`. The SMTP password, if any, "
                                   "is read from the TRACELAKE_SMTP_PASSWORD environment variable.",
                       epilog="Example: tracelake mail rank0.eml --smtp mail.example.com:587 --starttls "
                              "--user me --from me@example.com --to team@example.com")
    s.add_argument("eml", metavar="OUT.eml")
    s.add_argument("--smtp", required=True, metavar="HOST:PORT")
    s.add_argument("--from", dest="sender", required=True, metavar="ADDRESS")
    s.add_argument("--to", required=True, action="append", metavar="ADDRESS", help="repeatable")
    s.add_argument("--starttls", action="store_true")
    s.add_argument("--user", metavar="NAME")
    s.set_defaults(func=_cmd_mail)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except OSError as e:  # an output that cannot be written (read-only, under a file, full disk)
        _say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    except BadLimits as e:  # TRACELAKE_MAX_INFLATED / _RATIO set to something that is not a number
        _say(f"error  {e}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("interrupted: workers stopped; a re-run cleans up and carries on", err=True)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
