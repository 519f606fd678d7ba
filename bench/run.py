"""The batch job end to end (issue #9).

- tracelake: `tracelake run` over all of ../shared/traces with all cores (ingest, calling
  context, database), the main views evaluated for every trace, then the reports (a page per
  trace and the index), timed apart.
- HTA, same run: one HTA process parses each PyTorch trace (and the DDP rank directory) and
  computes get_gpu_kernel_breakdown and get_temporal_breakdown; crashes count with their time.
- scaling: 200 traces (copies of the bundled samples with distinct bytes) with 1, 2, ... workers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from tracelake.analysis import run_job
from tracelake.analysis.database import connect

from .common import HTA_PYTHON, REPO, SHARED

VIEWS = ["kernel_summary", "memcpy_time_summary", "api_summary", "temporal_breakdown", "idle_breakdown_by_stream",
         "overlap", "steps", "findings", "gpu_gaps", "gpu_utilization", "callctx_topdown"]

_HTA = """
import os, sys, tempfile, logging
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
crashed = 0
for target in sys.argv[1:]:
    d = target if os.path.isdir(target) else tempfile.mkdtemp()
    if d != target:
        os.symlink(target, os.path.join(d, os.path.basename(target)))
    try:
        a = TraceAnalysis(trace_dir=d, include_last_profiler_step=True)
        a.get_gpu_kernel_breakdown(visualize=False)
        a.get_temporal_breakdown(visualize=False)
    except Exception:
        crashed += 1
print(crashed)
"""


def _ours(out: Path, jobs: int | None) -> tuple[float, float]:
    """(ingest + views, reports) in seconds."""
    from tracelake.analysis.report_job import write_reports

    t0 = time.perf_counter()
    run_job.run([str(SHARED / "traces")], out, jobs=jobs)
    con = connect(out / "lake")
    for view in VIEWS:
        con.sql(f"SELECT count(*) FROM (SELECT * FROM {view})").fetchall()
    t1 = time.perf_counter()
    write_reports(con, out / "reports")
    con.close()
    return t1 - t0, time.perf_counter() - t1


def _hta() -> tuple[float, int, int]:
    base = SHARED / "traces" / "pytorch"
    targets = [p for p in sorted(base.iterdir()) if p.name.endswith(".json.gz")]
    targets += [p for p in sorted(base.iterdir()) if p.is_dir()]
    t0 = time.perf_counter()  # one HTA process for all targets: its start-up is paid once
    proc = subprocess.run([str(HTA_PYTHON), "-c", _HTA, *map(str, targets)], capture_output=True, text=True,
                          timeout=1800)
    crashed = int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else len(targets)
    return time.perf_counter() - t0, len(targets), crashed


def _scaling(tmp: Path) -> list[tuple[int, float]]:
    src = tmp / "many"
    src.mkdir()
    samples = [p for p in (REPO / "tests" / "data").iterdir() if p.name.endswith(".json.gz")]
    for i in range(200):
        f = samples[i % len(samples)]
        target = src / f"{i:03d}-{f.name}"
        shutil.copy(f, target)
        with open(target, "ab") as fh:
            fh.write(b"\0" * (i + 1))  # distinct bytes, same events: a distinct trace each
    results = []
    workers = 1
    while workers <= (os.cpu_count() or 1):
        t0 = time.perf_counter()
        run_job.run([str(src)], tmp / f"w{workers}", jobs=workers)
        results.append((workers, time.perf_counter() - t0))
        workers *= 2
    return results


def run() -> list[tuple[str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-run-"))
    rows = []
    try:
        t_lake, t_reports = _ours(tmp / "all", None)
        t_ours = t_lake + t_reports
        rows.append(("tracelake run over ../shared/traces (37 files): ingest + 11 views", f"{t_lake:.1f} s"))
        rows.append(("  + reports (a page per trace, index)", f"{t_reports:.1f} s"))
        if HTA_PYTHON.exists():
            t_hta, n, crashed = _hta()
            rows.append((f"  HTA parse + kernel + temporal breakdown, {n} PyTorch targets ({crashed} crashed)",
                         f"{t_hta:.1f} s"))
            rows.append(("  HTA / tracelake without reports", f"{t_hta / t_lake:.1f}"))
            rows.append(("  HTA / tracelake end to end (target >= 10)", f"{t_hta / t_ours:.2f}"))
        scaling = _scaling(tmp)
        base = scaling[0][1]
        rows.append(("  200 traces: seconds (speedup) by workers",
                     ", ".join(f"{w}: {t:.1f} s ({base / t:.2f}x)" for w, t in scaling)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
