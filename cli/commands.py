"""What each `tracelake` command does (cli/main.py parses the command line, then calls these).

Each command takes the parsed arguments and returns the exit code (EXIT_* below; the CLI exits with it).
Lines holding a file name or a trace string are printed with terminal.say (control characters
escaped); file-system errors about outputs and Ctrl-C are turned into one line by cli.main.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..ingest.printable import has_control, terminal_lines
from ..jobs import fs_errors
from ..lake import safe_sql
from ..lake.database import DB_FILE, connect
from ..lake.version import __version__
from .limit_options import limits_of
from .mcp_command import mcp
from .terminal import say

if TYPE_CHECKING:
    from ..jobs.ingest_job import FileOutcome

# Each command imports what it needs when it runs: a one-query `tracelake sql` process does not
# load the ingesters, polars' analyses or the report renderer (bench/cli.py measures it).

EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE = 0, 1, 2


def ingest(args) -> int:
    from ..jobs.ingest_job import ingest_paths

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


def _open_lake(lake: str, private: bool = False, reads: Iterable[str] | None = ()):
    """The lake's database connection, or None after printing why there is none; first derived
    what the lake lacks of the views it keeps and of `reads` (None: every view), once: the lake
    keeps them from then on (jobs/derive_job.ensure_derived)."""
    from ..jobs.derive_job import ensure_derived

    for warning in ensure_derived(lake, reads, jobs=os.cpu_count() or 1):
        say(f"warning  {warning}", err=True)
    try:
        return connect(lake, private=private)
    except FileNotFoundError as e:
        say(f"error  {e}", err=True)
        return None


def sql(args) -> int:
    import duckdb

    from ..lake import catalog
    from .output import write_result

    # safe: its locked settings bind no other connection; the materialized views the query evaluates
    con = _open_lake(args.lake, private=args.safe, reads=catalog.materialized_reads(args.query))
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


def stats(args) -> int:
    from ..jobs import stats_scope
    from ..lake import catalog
    from ..lake.schema import TABLES
    from . import stats as reports

    def failed(o: FileOutcome):
        if o.status == "error":
            say(f"error  {o.error}", err=True)
        elif o.status == "ok":  # what `ingest` says of the file; a file cut short fails (its numbers are partial)
            for w in o.warnings:
                say(f"{'error ' if o.truncated else 'warning'} {o.path}: {w}", err=True)

    asked = [n.strip() for n in ",".join(args.report or []).split(",") if n.strip()] or list(reports.DEFAULT)
    known = {name for f in catalog.load_files() for name in f.creates} | set(TABLES)
    try:
        names = reports.resolve(asked, known)
    except ValueError as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    with stats_scope.of_files(args.files, args.lake, [reports.reads([name], known) for name in names],
                              failed) as (outcomes, con):
        if con is None:
            say(f"error  no trace files found under: {' '.join(args.files)}", err=True)
            return EXIT_SOME_FAILED
        try:
            reports.resolve(names, reports.trace_views(con, names))  # a view without trace_id is no report
        except ValueError as e:
            say(f"error  {e}", err=True)
            return EXIT_USAGE
        _print_stats(con, reports, names, [o for o in outcomes if o.status == "ok"], args.format, args.timeunit)
    return EXIT_SOME_FAILED if any(o.status == "error" or o.truncated for o in outcomes) else EXIT_OK


def _print_stats(con, reports, names: list[str], outcomes: list[FileOutcome], fmt: str, unit: str) -> None:
    """Table: a titled table per report and file, or one table with a `file` column for a report
    of at most one row per file (the headline numbers: a row per rank); durations in `unit`,
    percentages as "14.5 %", values whole unless written to a terminal. CSV: a block per report
    (a `# report` line before each when there are several; a leading `file` column when there are
    several files). JSON: {report: [rows, each with trace_id and file]}."""
    import polars as pl

    from .output import flat, table_width
    from .table_format import format_table
    from .time_units import in_unit

    out = sys.stdout
    several_files = len(outcomes) > 1
    as_json: dict[str, list] = {}
    for name in names:
        if fmt == "csv" and len(names) > 1:
            out.write(f"# {name}\n")
        rels = [(o, in_unit(reports.query(con, name, o.trace_id), unit)) for o in outcomes]
        if fmt == "table":
            results = [(Path(o.path).name, rel.columns, rel.fetchall()) for o, rel in rels]
            if several_files and all(len(rows) <= 1 for _, _, rows in results):  # one table, a row per file
                out.write(f"\n** {reports.title(name)}\n")
                out.write(format_table(["file", *results[0][1]], [(file, *row) for file, _, rows in results
                                                                  for row in rows], table_width(out), percent=True))
                continue
            for file, columns, rows in results:
                out.write(f"\n** {reports.title(name)}: {file}\n")
                out.write(format_table(columns, rows, table_width(out), percent=True))
            continue
        frames = []
        for o, rel in rels:
            frame = rel.pl()
            if fmt == "json" or several_files:
                frame = frame.insert_column(0, pl.lit(Path(o.path).name).alias("file"))
            if fmt == "json":
                frame = frame.insert_column(0, pl.lit(o.trace_id).alias("trace_id"))
            frames.append(frame)
        if fmt == "csv":
            out.write(flat(pl.concat(frames, how="diagonal_relaxed")).write_csv())
        elif fmt == "json":
            as_json[name] = pl.concat(frames, how="diagonal_relaxed").to_dicts()
    if fmt == "json":
        out.write(json.dumps(as_json, indent=1, default=str) + "\n")


def relink(args) -> int:
    from ..jobs.derive_job import ensure_derived
    from ..lake import layout
    from ..lake.database import build_database

    if not layout.is_lake(Path(args.lake)):
        say(f"error  {args.lake}: not a tracelake lake (no traces/ folder)", err=True)
        return EXIT_USAGE
    warnings = ensure_derived(args.lake, None, jobs=os.cpu_count() or 1)  # every view, what a changed one lacks
    db = build_database(args.lake)
    for warning in warnings:
        say(f"warning  {warning}", err=True)
    say(str(db))
    return EXIT_OK


def compact(args) -> int:
    from ..lake import layout
    from ..lake.compact import compact as run_compaction

    if not layout.is_lake(Path(args.lake)):
        say(f"error  {args.lake}: not a tracelake lake (no traces/ folder)", err=True)
        return EXIT_USAGE
    s = run_compaction(args.lake)
    say(f"compacted {s.traces} traces ({s.loose} were loose, {s.segments_rewritten} segments rewritten): "
        f"{s.files_before:,} files -> {s.files_after:,} in {s.seconds:.1f} s")
    return EXIT_OK


def _resolve_trace(con, wanted: str) -> str | None:
    """The trace id equal to `wanted`, or the only one starting with it; None after saying why not."""
    ids = [r[0] for r in con.execute("SELECT trace_id FROM traces").fetchall()]
    matches = [t for t in ids if t == wanted] or [t for t in ids if t.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    say(f"error  --trace {wanted!r} matches {len(matches)} traces; trace ids: {', '.join(sorted(ids)[:20])}",
        err=True)
    return None


def callctx(args) -> int:
    from ..analysis import callctx_export

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
            data = terminal_lines(data.decode("utf-8", "replace")).encode()
        sys.stdout.buffer.write(data)
    return EXIT_OK


def export(args) -> int:
    from ..jobs import export_scope
    from ..jobs.run_export import resolve_run, run_traces, write_run
    from ..jobs.trace_export import write

    def exported(con, trace_id: str) -> int:
        n = write(con, trace_id, args.output)
        say(f"{Path(args.output).resolve()} ({n:,} events of {trace_id})")
        return EXIT_OK

    def exported_run(con, run_id: str) -> int:
        n, flows = write_run(con, run_id, args.output)
        say(f"{Path(args.output).resolve()} ({n:,} events of run {run_id}, {flows:,} collectives linked)")
        return EXIT_OK

    if args.lake:
        if (args.run is None) == (len(args.trace) != 1):
            say("error  export --lake needs one trace id, or --run RUN_ID (the ranks of a run)", err=True)
            return EXIT_USAGE
        con = _open_lake(args.lake)
        if con is None:
            return EXIT_USAGE
        try:
            if args.run is not None:
                run_id, why = resolve_run(con, args.run)
                if run_id is None:
                    say(f"error  {why}", err=True)
                    return EXIT_USAGE
                trace_ids = [t for t, _, _ in run_traces(con, run_id)]
            else:
                trace_id = _resolve_trace(con, args.trace[0])
                if trace_id is None:
                    return EXIT_USAGE
                trace_ids = [trace_id]
        finally:
            con.close()
        with export_scope.of_lake(args.lake, trace_ids) as con:
            return exported_run(con, run_id) if args.run is not None else exported(con, trace_ids[0])
    if args.run is not None or not args.trace:
        say("error  export needs trace files, or --lake DIR with a trace id or --run RUN_ID", err=True)
        return EXIT_USAGE
    for path in args.trace:
        if not Path(path).is_file():
            say(f"error  {path}: no such file (a trace id needs --lake DIR)", err=True)
            return EXIT_USAGE
    with export_scope.of_files(args.trace, lambda o: None) as (outcomes, con):
        failed = [o for o in outcomes if o.status != "ok"]
        if failed or not outcomes:
            say(f"error  {failed[0].error if failed else args.trace[0] + ': not a trace'}", err=True)
            return EXIT_SOME_FAILED
        if len(outcomes) == 1:
            return exported(con, outcomes[0].trace_id)
        ids = [o.trace_id for o in outcomes]
        runs = con.execute("SELECT run_id, count(DISTINCT trace_id) FROM rank_runs WHERE list_contains(?, trace_id) "
                           "GROUP BY run_id", [ids]).fetchall()
        if len(runs) != 1 or runs[0][1] != len(ids):
            say(f"error  the {len(ids)} files are not the ranks of one distributed run (rank files of one "
                "folder, same world size, overlapping in time, with communication kernels)", err=True)
            return EXIT_USAGE
        return exported_run(con, runs[0][0])


def whatif(args) -> int:
    from ..analysis import critpath_whatif
    from .output import write_result

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
    con = _open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    try:
        trace_ids = None
        if args.trace:
            trace_id = _resolve_trace(con, args.trace)
            if trace_id is None:
                return EXIT_USAGE
            trace_ids = [trace_id]
        frame = critpath_whatif.whatif(con, scenarios, trace_ids)
        write_result(con.from_arrow(frame.to_arrow()), args.format, sys.stdout)
    finally:
        con.close()
    return EXIT_OK


def run(args) -> int:
    from ..jobs.run_with_reports import run_with_reports
    from .progress import Progress

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


def report(args) -> int:
    # an index page: its cross-run views want derived tables (every view)
    con = _open_lake(args.lake, reads=None if len(args.trace or []) != 1 and not args.eml else ())
    if con is None:
        return EXIT_USAGE
    # the reports pull in Altair and vl-convert: imported here, not at every command's start-up
    from ..jobs.report_job import write_reports, write_trace_report
    from ..jobs.trace_export import page_export_path

    try:
        resolved = [_resolve_trace(con, wanted) for wanted in args.trace or []]
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


def mail(args) -> int:
    import email
    import email.policy
    import email.utils
    import os
    import smtplib

    from ..reports.email import send

    for option, address in [("--from", args.sender)] + [("--to", a) for a in args.to]:
        if has_control(address):
            say(f"error  {option} {address}: an address cannot hold line breaks or other control characters",
                err=True)
            return EXIT_USAGE
    host, _, port = args.smtp.rpartition(":")
    if not host or not port.isdigit():
        print(f"error  --smtp {args.smtp!r}: expected HOST:PORT", file=sys.stderr)
        return EXIT_USAGE
    try:
        msg = email.message_from_bytes(Path(args.eml).read_bytes(), policy=email.policy.SMTP)
    except OSError as e:
        say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    del msg["From"], msg["To"], msg["Date"], msg["Message-ID"]
    # each sending is a new message, as a mail client's draft: its own date and id (a relay may
    # refuse a message without a Date; clients drop a second message with the same Message-ID)
    msg["From"], msg["To"] = args.sender, ", ".join(args.to)
    msg["Date"], msg["Message-ID"] = email.utils.formatdate(localtime=True), email.utils.make_msgid(domain="tracelake")
    try:
        send(msg.as_bytes(), host, int(port), args.sender, args.to, args.starttls, args.user,
             os.environ.get("TRACELAKE_SMTP_PASSWORD"))
    except (OSError, smtplib.SMTPException) as e:
        say(f"error  sending {args.eml} via {args.smtp}: {e}", err=True)
        return EXIT_SOME_FAILED
    say(f"sent {args.eml} to {', '.join(args.to)}")
    return EXIT_OK


def diff(args) -> int:
    from ..analysis import diff_gate, diff_noise
    from ..jobs.diff import DiffInputError
    from ..jobs.diff import diff as compare
    from ..reports.render import diff_report
    from .diff_output import as_csv, as_json, as_table

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
    html = diff_report(result, version=__version__) if page else None
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
            from ..reports.email import build_message

            Path(args.eml).write_bytes(build_message(html, f"tracelake diff: {args.base} vs {args.new}").as_bytes())
    except OSError as e:
        say(f"error  writing {e.filename}: {e.strerror}", err=True)
        return EXIT_USAGE
    outcomes = [o for o in (diff_gate.check(c, result) for c in conditions) if o]
    for o in outcomes:
        say(f"{'FAIL  ' if o.failed else 'UNSURE'} {o.line}", err=True)
    return EXIT_SOME_FAILED if any(o.failed for o in outcomes) else EXIT_OK


COMMANDS = {"ingest": ingest, "stats": stats, "sql": sql, "relink": relink, "compact": compact, "callctx": callctx,
            "whatif": whatif, "export": export, "run": run, "report": report, "mail": mail, "diff": diff, "mcp": mcp}
