"""`tracelake run` on a Dask LocalCluster of 2 worker processes against the local executor with 2
workers, on N traces (default 1,000), ingest and report pages timed apart, both sides in one run
(issue #16 item 4; the numbers go to docs/run.md):

    python -m bench.dask_run [N] [--no-reports]

The N traces are the 4 bundled samples hard-linked under N new names (`0000-<sample name>`, ...):
no bytes are copied, and as a trace id is the file stem with the content hash, each link is a
trace of its own. The cluster is started before the clock runs (its start-up is printed apart).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from tracelake.jobs import run_job
from tracelake.jobs.report_job import write_run_reports

from .common import REPO

WORKERS = 2


def make_traces(target: Path, n: int) -> None:
    samples = sorted(p for p in (REPO / "tests" / "data").iterdir() if p.name.endswith((".json.gz", ".sqlite.gz")))
    target.mkdir(parents=True)
    for i in range(n):
        sample = samples[i % len(samples)]
        os.link(sample, target / f"{i:04d}-{sample.name}")


def _side(src: Path, out: Path, reports: bool, **executor) -> tuple[float, float, int, int]:
    """(ingest s, reports s, traces ok, pages written)"""
    t0 = time.perf_counter()
    summary = run_job.run([str(src)], out, jobs=WORKERS, **executor)
    t1 = time.perf_counter()
    errors: list[dict] = []
    if reports:
        write_run_reports(out, summary.files, jobs=WORKERS, page_errors=errors, **executor)
    t2 = time.perf_counter()
    assert not errors, errors[:3]
    pages = len(list((out / "reports" / "traces").glob("*.html"))) if reports else 0
    return t1 - t0, t2 - t1, summary.count("ok"), pages


def main(argv: list[str]) -> int:
    from distributed import LocalCluster

    n = int(next((a for a in argv if a.isdigit()), 1000))
    reports = "--no-reports" not in argv
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-dask-"))
    try:
        make_traces(tmp / "in", n)
        print(f"{n} traces (hard links of the 4 samples); load average before: {os.getloadavg()[0]:.1f}", flush=True)
        local = _side(tmp / "in", tmp / "local", reports)
        print(f"local executor, {WORKERS} workers: ingest {local[0]:.1f} s, reports {local[1]:.1f} s "
              f"({local[2]} traces, {local[3]} pages); load average {os.getloadavg()[0]:.1f}", flush=True)
        t0 = time.perf_counter()
        with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            started = time.perf_counter() - t0
            dask = _side(tmp / "in", tmp / "dask", reports, executor="dask", scheduler=cluster.scheduler_address)
        print(f"Dask LocalCluster, {WORKERS} workers x 1 thread (start-up {started:.1f} s, not counted): "
              f"ingest {dask[0]:.1f} s, reports {dask[1]:.1f} s ({dask[2]} traces, {dask[3]} pages); "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        print(f"dask / local: ingest {dask[0] / local[0]:.2f}, reports "
              f"{dask[1] / local[1] if reports else float('nan'):.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
