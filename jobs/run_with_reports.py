"""The batch job with its reports, as `tracelake run` and tracelake.run do it: the lake (run_job.py),
then OUTDIR/reports (report_job.write_run_reports) unless they are current (report_stamp) or not
wanted."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from . import report_stamp, run_job

if TYPE_CHECKING:
    from ..ingest.reading import Limits
    from .ingest_job import FileOutcome


def run_with_reports(paths: list[str], out: str | Path, *, jobs: int | None = None, prune: bool = False,
                     reports: bool = True, export: bool = False, executor: str = "local",
                     scheduler: str | None = None, limits: Limits | None = None,
                     on_outcome: Callable[[FileOutcome, int, int], None] = lambda o, done, total: None,
                     on_stage: Callable[[str], None] = lambda text: None,
                     on_pages: Callable[[int, int], None] = lambda done, total: None,
                     page_errors: list[dict] | None = None) -> tuple[run_job.RunSummary, Path | None]:
    """(the run's summary, the reports' index page: None when no reports were wanted or no file was
    found). The summary's seconds are the whole run's, reports included, and its stage_seconds
    hold `reports` when they were written. page_errors: the report pages that could not be
    rendered ({trace_id, error}; the others were); export, on_pages: report_job.write_reports';
    the others: run_job.run's."""
    t0 = time.perf_counter()
    summary = run_job.run(paths, out, jobs=jobs, prune=prune, on_outcome=on_outcome, executor=executor,
                          scheduler=scheduler, limits=limits, on_stage=on_stage)
    index = None
    if reports and summary.files and report_stamp.current(out, summary.files, export):
        index = Path(out) / "reports" / "index.html"  # written from this lake and these files already
    elif reports and summary.files:
        from .report_job import write_run_reports  # Altair and vl-convert: only when needed

        t_reports = time.perf_counter()
        index = write_run_reports(out, summary.files, jobs=jobs, executor=executor, scheduler=scheduler,
                                  page_errors=page_errors, on_pages=on_pages, export=export)
        summary.stage_seconds["reports"] = time.perf_counter() - t_reports
    summary.seconds = time.perf_counter() - t0  # the whole run: ingest, derivation and reports
    return summary, index
