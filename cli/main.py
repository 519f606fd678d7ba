"""The `tracelake` command line. Exit codes: 0 all good, 1 some inputs failed, 2 usage error (or an
output that cannot be written), 130 interrupted (Ctrl-C), 141 the reader of standard output went
away (`| head`; nothing is printed), 75 another process is writing the lake (with --no-wait:
lake/lock.py). File-system errors about outputs, bad inflate limits and Ctrl-C end in one line
each, here in `main`.

This module parses the arguments and sets the process-wide settings (process_settings.py) before
anything heavy is imported; the commands themselves are in commands.py.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import NoReturn

from ..ingest.reading import BadLimits
from ..jobs import fs_errors
from ..jobs.process_settings import prefer_jemalloc, use_cores
from ..lake.format_version import LakeTooNew
from ..lake.lock import LakeBusy, LakeReadOnly
from ..lake.version import __version__
from .limit_options import add_limit_options, add_memory_option, apply_memory_option
from .mcp_command import add_parser as add_mcp_parser
from .peak_option import add_peak_option, apply_peak_option
from .terminal import say
from .time_units import DEFAULT as DEFAULT_TIME_UNIT
from .time_units import UNITS as TIME_UNITS

EXIT_USAGE, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 130, 141  # 141: as a tool that SIGPIPE ended
EXIT_LAKE_BUSY = 75  # --no-wait and another process writes the lake (sysexits' EX_TEMPFAIL: try again later)
NO_WAIT_HELP = ("fail at once (exit 75) instead of waiting when another process is writing the lake "
                "(the line says which: pid, host, command, since when)")


EXPORT_HELP = ("also write each trace's Perfetto export beside its page (<page>.trace.json.gz, as `tracelake "
               "export` writes it) and link the findings and largest GPU gaps to it, with their time in it")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tracelake", description="Offline analysis of GPU deep-learning traces.",
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Example: tracelake run /data/profiles --out results/   "
                                       "(then open results/reports/index.html)\n"
                                       "         tracelake stats report.sqlite --report cuda_gpu_kern_sum\n"
                                       "`tracelake COMMAND --help` shows each command's options and an example.")
    p.add_argument("--version", action=_Versions, nargs=0, help="show the versions of tracelake, DuckDB, polars "
                   "and pyarrow and exit")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("ingest", help="ingest trace files into a lake",
                       description="Ingest Nsight Systems SQLite exports (.sqlite, .sqlite.gz) and PyTorch profiler "
                                   "traces (.json, .json.gz) into a Parquet lake. Directories are searched recursively.",
                       epilog="Example: tracelake ingest traces/ run42/rank0.pt.trace.json.gz --lake lake/")
    s.add_argument("paths", nargs="+", metavar="PATH", help="trace files or directories")
    s.add_argument("--lake", required=True, metavar="DIR", help="lake directory (created if missing)")
    s.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)
    add_limit_options(s)
    add_memory_option(s)

    s = sub.add_parser("stats", help="print the headline numbers and summary tables of trace files (like nsys stats)",
                       description="Read the files (into --lake, where it does not hold them already) and print reports: the "
                                   "headline numbers, kernels, memory copies, GPU idle by cause and the findings "
                                   "by default. A report is a view's rows for each file; NVIDIA's `nsys stats` and "
                                   "`nsys analyze` report names are accepted too (cuda_gpu_kern_sum = "
                                   "kernel_summary, cuda_gpu_mem_time_sum, cuda_gpu_sum, cuda_api_sum, nvtx_sum, "
                                   "gpu_gaps, ...).",
                       epilog="Example: tracelake stats report.sqlite rank0.pt.trace.json.gz "
                              "--report cuda_gpu_kern_sum,idle_breakdown --format csv")
    s.add_argument("files", nargs="+", metavar="FILE", help="trace files or directories")
    s.add_argument("--report", action="append", metavar="NAME,...",
                   help="reports to print, comma-separated, repeatable (default: summary, kernel_summary, "
                        "memcpy_kind_summary, idle_breakdown, findings)")
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")
    s.add_argument("--timeunit", choices=list(TIME_UNITS), default=DEFAULT_TIME_UNIT,
                   help="unit of the durations and timestamps, as nsys stats --timeunit (default: nsec); "
                        "a column's name says its unit (total_ns, total_us, total_ms, total_s)")
    s.add_argument("--lake", metavar="DIR", help="ingest into this lake and keep it; files it holds unchanged are read from it "
                        "(default: nothing is written)")
    add_peak_option(s)

    s = sub.add_parser("diff", help="what changed between two traces or runs, why, and is it real (a CI gate)",
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

    s = sub.add_parser("sql", help="run a SQL query on a lake",
                       description="Run one SQL query with every tracelake table and view available.",
                       epilog="Example: tracelake sql --lake lake/ \"SELECT name, count(*) FROM kernels GROUP BY 1\"")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--format", choices=["table", "csv", "json"], default="table")
    s.add_argument("--safe", action="store_true",
                   help="refuse anything but queries, and any file access outside the lake (default: the "
                        "query runs with your rights, like the duckdb CLI: COPY ... TO can write files)")
    s.add_argument("query", metavar="QUERY")
    add_peak_option(s)

    s = sub.add_parser("relink", help="rebuild a lake's tracelake.duckdb (after moving the lake folder)",
                       description="Rebuild the lake's database (its views hold the lake's absolute path).",
                       epilog="Example: tracelake relink --lake /new/place/lake")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)

    s = sub.add_parser("compact", help="merge the lake's per-trace files into a few large ones (sorted by trace)",
                       description="Merge every table's per-trace partitions into one Parquet file per table, "
                                   "sorted by trace_id, so queries stay fast and the file count small at "
                                   "thousands of traces (`tracelake run` does it by itself above 1,000 new traces).",
                       epilog="Example: tracelake compact --lake lake/")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)

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

    s = sub.add_parser("export", help="write a trace with tracelake's analysis as a file Perfetto opens",
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

    s = sub.add_parser("whatif", help="each step's critical path if some of its edges were shortened (CUDA graphs, ...)",
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

    s = sub.add_parser("run", help="the batch job: trace directories -> lake and database (incremental, parallel)",
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

    s = sub.add_parser("report", help="write HTML reports (one trace, or an index of several with their pages)",
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

    add_mcp_parser(sub)
    return p


class _Versions(argparse.Action):
    """--version: tracelake's and the libraries' versions, what a bug report needs."""

    def __call__(self, parser, namespace, values, option_string=None):
        import platform
        from importlib.metadata import PackageNotFoundError, version

        parts = [f"tracelake {__version__}"]
        for name in ("duckdb", "polars", "pyarrow"):
            try:
                parts.append(f"{name} {version(name)}")
            except PackageNotFoundError:
                parts.append(f"{name} (not installed)")
        parts.append(f"Python {platform.python_version()}")
        print(", ".join(parts))
        parser.exit()


# Commands whose process ends without Python's teardown once they return (from the command line
# only: main(argv) returns as usual). They leave no worker process, thread, connection or
# temporary file behind them, and freeing every module and object one by one, which nothing
# needs at the end of a process, took 70-100 ms of `tracelake ingest` of the 89 MB reference trace
# and 60-80 ms of `tracelake stats` of it (2 cores), and 1.9-2.0 s of `tracelake mcp` after its
# client closed standard input (the MCP SDK's modules), which a client waits out.
QUICK_EXIT = frozenset({"ingest", "stats", "mcp"})


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    code = _run(args)
    if argv is None and args.command in QUICK_EXIT:
        _exit_now(code)
    return code


def _exit_now(code: int) -> NoReturn:
    """End the process now: the atexit handlers run and the output is flushed, the rest of the
    interpreter's teardown is skipped (os._exit)."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
    os._exit(code)


def _run(args) -> int:
    prefer_jemalloc()  # before the commands import pyarrow
    apply_memory_option(args)  # before any worker process starts
    apply_peak_option(args)
    use_cores(getattr(args, "jobs", None))
    from .commands import COMMANDS

    warnings.formatwarning = lambda message, *_, **__: f"warning  {message}\n"  # one line, no source line

    try:
        with lake_lock(args):
            return COMMANDS[args.command](args)
    except LakeBusy as e:
        say(f"error  {e}; try again later, or leave out --no-wait to wait for it", err=True)
        return EXIT_LAKE_BUSY
    except (LakeReadOnly, LakeTooNew) as e:
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    except BrokenPipeError:  # `tracelake sql ... | head`: the reader has what it wanted; nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush goes nowhere
        return EXIT_BROKEN_PIPE
    except OSError as e:  # an output that cannot be written (read-only, under a file, full disk)
        say(f"error  {fs_errors.describe(e)}", err=True)
        return EXIT_USAGE
    except BadLimits as e:  # TRACELAKE_MAX_INFLATED / _RATIO set to something that is not a number
        say(f"error  {e}", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted: workers stopped; a re-run cleans up and carries on", err=True)
        return EXIT_INTERRUPTED
    except Exception as e:
        line = fs_errors.io_error_line(e)  # DuckDB could not write a file (a full disk): one line
        if line is None:
            raise
        say(f"error  {line}", err=True)
        return EXIT_USAGE


def lake_lock(args):
    """The writer lock of the lake a writing command writes (lake/lock.py), held for the whole
    command (`run`: its reports too); a no-op for the others and for a folder that is no lake yet
    where the command needs one (compact, relink say so themselves)."""
    import contextlib
    from pathlib import Path

    from ..lake import layout
    from ..lake.lock import writer_lock

    if not hasattr(args, "no_wait"):
        return contextlib.nullcontext()
    lake = Path(args.out) / "lake" if args.command == "run" else Path(args.lake)
    if args.command in ("compact", "relink") and not layout.is_lake(lake):
        return contextlib.nullcontext()
    return writer_lock(lake, wait=not args.no_wait, on_wait=lambda line: say(f"waiting  {line}", err=True))


if __name__ == "__main__":
    sys.exit(main())
