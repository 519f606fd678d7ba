"""`tracelake export`: a trace (or the ranks of a run), from files or a lake, with tracelake's analysis
as a file Perfetto opens (docs/export.md)."""

from __future__ import annotations

from pathlib import Path

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from ..terminal import say

NAME = "export"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="write a trace with tracelake's analysis as a file Perfetto opens",
                       description="Chrome trace-event JSON (Perfetto's UI and chrome://tracing open it): the "
                                   "trace's events, plus tracks for its steps, critical path, GPU idle gaps by "
                                   "cause, and its findings as instant events with their advice (docs/export.md).",
                       epilog="Example: tracelake export rank0.pt.trace.json.gz -o rank0.perfetto.json.gz\n"
                              "         tracelake export --lake lake/ rank0 -o rank0.perfetto.json\n"
                              "         tracelake export run/rank*.pt.trace.json.gz -o run.perfetto.json.gz\n"
                              "         tracelake export --lake lake/ --run rank0 -o run.perfetto.json.gz")
    s.add_argument("trace", metavar="TRACE", nargs="*",
                   help="a trace file; with --lake, a trace id (or a unique prefix); several trace files: "
                        "the ranks of one distributed run, written into one file")
    s.add_argument("--lake", metavar="DIR", help="read the trace from this lake")
    s.add_argument("--run", metavar="RUN_ID", help="with --lake: every rank of this distributed run in one file, "
                   "collective instances linked across the ranks (a run id, a unique part of one, or a trace "
                   "id of one of its ranks)")
    s.add_argument("--format", choices=["perfetto"], default="perfetto",
                   help="perfetto: Chrome trace-event JSON (the default and only format)")
    s.add_argument("-o", "--output", required=True, metavar="FILE", help="the file to write (.gz: compressed)")


def run(args) -> int:
    if args.lake:
        return _from_lake(args)
    if args.run is not None or not args.trace:
        say("error  export needs trace files, or --lake DIR with a trace id or --run RUN_ID", err=True)
        return EXIT_USAGE
    for path in args.trace:
        if not Path(path).is_file():
            say(f"error  {path}: no such file (a trace id needs --lake DIR)", err=True)
            return EXIT_USAGE
    return _from_files(args)


def _from_lake(args) -> int:
    """A trace of the lake, or with --run the ranks of one of its runs."""
    from ...jobs import export_scope
    from ...jobs.run_export import resolve_run, run_traces
    from ..lake_access import open_lake, resolve_trace

    if (args.run is None) == (len(args.trace) != 1):
        say("error  export --lake needs one trace id, or --run RUN_ID (the ranks of a run)", err=True)
        return EXIT_USAGE
    con = open_lake(args.lake)
    if con is None:
        return EXIT_USAGE
    run_id = None
    try:
        if args.run is not None:
            run_id, why = resolve_run(con, args.run)
            if run_id is None:
                say(f"error  {why}", err=True)
                return EXIT_USAGE
            trace_ids = [t for t, _, _ in run_traces(con, run_id)]
        else:
            trace_id = resolve_trace(con, args.trace[0])
            if trace_id is None:
                return EXIT_USAGE
            trace_ids = [trace_id]
    finally:
        con.close()
    with export_scope.of_lake(args.lake, trace_ids) as con:
        if run_id is not None:
            return _run_exported(con, run_id, args.output)
        return _exported(con, trace_ids[0], args.output)


def _from_files(args) -> int:
    """A trace file, or the rank files of one distributed run."""
    from ...jobs import export_scope

    with export_scope.of_files(args.trace, lambda o: None) as (outcomes, con):
        failed = [o for o in outcomes if o.status != "ok"]
        if failed or not outcomes:
            say(f"error  {failed[0].error if failed else args.trace[0] + ': not a trace'}", err=True)
            return EXIT_SOME_FAILED
        ids = [o.trace_id for o in outcomes if o.trace_id is not None]  # (each, of an ok outcome)
        if len(ids) == 1:
            return _exported(con, ids[0], args.output)
        runs = con.execute("SELECT run_id, count(DISTINCT trace_id) FROM rank_runs WHERE list_contains(?, trace_id) "
                           "GROUP BY run_id", [ids]).fetchall()
        if len(runs) != 1 or runs[0][1] != len(ids):
            say(f"error  the {len(ids)} files are not the ranks of one distributed run (rank files of one "
                "folder, same world size, overlapping in time, with communication kernels)", err=True)
            return EXIT_USAGE
        return _run_exported(con, runs[0][0], args.output)


def _exported(con, trace_id: str, output: str) -> int:
    from ...jobs.trace_export import write

    n = write(con, trace_id, output)
    say(f"{Path(output).resolve()} ({n:,} events of {trace_id})")
    return EXIT_OK


def _run_exported(con, run_id: str, output: str) -> int:
    from ...jobs.run_export import write_run

    n, flows = write_run(con, run_id, output)
    say(f"{Path(output).resolve()} ({n:,} events of run {run_id}, {flows:,} collectives linked)")
    return EXIT_OK
