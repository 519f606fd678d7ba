"""`tracelake stats FILE...`: the headline numbers and summary tables of trace files, as `nsys stats`
prints them (the reports: cli/stats.py; the database they are read from: jobs/stats_scope.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..exit_codes import EXIT_OK, EXIT_SOME_FAILED, EXIT_USAGE
from ..peak_option import add_peak_option
from ..terminal import say
from ..time_units import DEFAULT as DEFAULT_TIME_UNIT
from ..time_units import UNITS as TIME_UNITS

if TYPE_CHECKING:
    from ...jobs.ingest_job import FileOutcome

NAME = "stats"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="print the headline numbers and summary tables of trace files (like nsys stats)",
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


def run(args) -> int:
    from ...jobs import stats_scope
    from ...lake import catalog
    from ...lake.schema import TABLES
    from .. import stats as reports

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

    from ..output import flat, table_width
    from ..table_format import format_table
    from ..time_units import in_unit

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
