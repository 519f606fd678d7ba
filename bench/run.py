"""The batch job end to end (issues #9, #16), as users run it: each step a fresh process.

- tracelake: `tracelake run ../shared/traces --no-reports` (ingest, calling context, critical path,
  database, all cores), then what HTA computes below, kernel_summary and temporal_breakdown, each
  read by a `tracelake sql` process; and `tracelake run` with the reports (a page per trace and the
  index) into another folder. The reports' share is (run with reports - run without) / run with.
- HTA, same run: one HTA process parses each PyTorch trace (and the DDP rank directory) and
  computes get_gpu_kernel_breakdown and get_temporal_breakdown; crashes count with their time.
- scaling: 200 traces (copies of the bundled samples with distinct bytes), `tracelake run --no-reports
  --jobs N` for N = 1, 2, ... cores, each a fresh process; beside it the machine's own ceiling, in
  the same run: the speedup of N processes of a plain Python loop (no memory traffic, no I/O) over
  one. On the shared 2-vCPU machines a second busy vCPU has slowed the first (1.6x for the loop in
  one measurement, 2.0x minutes later), which bounds any job's scaling there at that time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import HTA_PYTHON, REPO, SHARED, compile_package, load_average, verdict

TRACELAKE = [str(Path(sys.executable).with_name("tracelake"))]
QUERIES = ["SELECT count(*), sum(total_ns) FROM kernel_summary", "SELECT count(*), sum(idle_pct) FROM temporal_breakdown"]

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


def _process(argv: list[str]) -> tuple[float, str]:
    """Seconds of the command as a fresh process, and its standard output."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO)
    if done.returncode not in (0, 1):  # 1: some inputs failed (the corpus holds files HTA and we refuse)
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()[-500:]}")
    return time.perf_counter() - t0, done.stdout


def _stages(run_json: str) -> str:
    """The run's own seconds per stage (`--json`'s stage_seconds)."""
    return ", ".join(f"{stage} {s:.1f} s" for stage, s in json.loads(run_json)["stage_seconds"].items())


def _ours(tmp: Path) -> tuple[float, float, float, str, str]:
    """(run without reports, the two views, run with reports) in seconds, each a fresh process, and
    the stages of each run."""
    t_lake, lake_json = _process(TRACELAKE + ["run", "--json", str(SHARED / "traces"), "--out", str(tmp / "lake_only"),
                                              "--no-reports"])
    t_views = sum(_process(TRACELAKE + ["sql", "--lake", str(tmp / "lake_only" / "lake"), q])[0] for q in QUERIES)
    t_full, full_json = _process(TRACELAKE + ["run", "--json", str(SHARED / "traces"), "--out", str(tmp / "with_reports")])
    return t_lake, t_views, t_full, _stages(lake_json), _stages(full_json)


def _hta() -> tuple[float, int, int]:
    base = SHARED / "traces" / "pytorch"
    targets = [p for p in sorted(base.iterdir()) if p.name.endswith(".json.gz")]
    targets += [p for p in sorted(base.iterdir()) if p.is_dir()]
    t0 = time.perf_counter()  # one HTA process for all targets: its start-up is paid once
    proc = subprocess.run([str(HTA_PYTHON), "-c", _HTA, *map(str, targets)], capture_output=True, text=True,
                          timeout=1800)
    crashed = int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else len(targets)
    return time.perf_counter() - t0, len(targets), crashed


_LOOP = "x = 0\nfor i in range(12_000_000):\n    x += i * i\n"


def _cpu_ceiling(workers: int) -> float:
    """The speedup of `workers` processes of the same CPU-bound loop over one (throughput: workers x
    one's time / the slowest of them), median of 3: what this machine gives any job at best."""
    def batch(n: int) -> float:
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", _LOOP]) for _ in range(n)]
        for p in procs:
            p.wait()
        return time.perf_counter() - t0

    ratios = sorted(workers * batch(1) / batch(workers) for _ in range(3))
    return ratios[1]


def _scaling(tmp: Path) -> list[tuple[int, float, dict[str, float]]]:
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
    while workers <= (os.cpu_count() or 1):  # a fresh process each, as users run it: --jobs N = N cores
        seconds, out = _process(TRACELAKE + ["run", "--json", "--no-reports", "--jobs", str(workers), str(src),
                                             "--out", str(tmp / f"w{workers}")])
        results.append((workers, seconds, json.loads(out)["stage_seconds"]))
        workers *= 2
    return results


def run() -> list[tuple[str, str]]:
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-run-"))
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    try:
        t_lake, t_views, t_full, lake_stages, full_stages = _ours(tmp)
        t_reports = max(t_full - t_lake, 0.0)
        rows.append(("`tracelake run ../shared/traces --no-reports` (37 files; process)", f"{t_lake:.1f} s"))
        rows.append(("  its stages (the run's own clock)", lake_stages))
        rows.append(("  + kernel_summary and temporal_breakdown, a `tracelake sql` process each", f"{t_views:.1f} s"))
        rows.append(("`tracelake run ../shared/traces` with reports (process)", f"{t_full:.1f} s"))
        rows.append(("  its stages (the run's own clock)", full_stages))
        share = t_reports / t_full
        rows.append(("  reports' share of the run: (with - without) / with (target <= 0.33)",
                     f"{share:.2f} ({verdict(share, 0.33, False)})"))
        if HTA_PYTHON.exists():
            t_hta, n, crashed = _hta()
            rows.append((f"HTA parse + kernel + temporal breakdown, {n} PyTorch targets ({crashed} crashed)",
                         f"{t_hta:.1f} s"))
            fast = t_hta / (t_lake + t_views)
            rows.append(("  HTA / tracelake without reports (run + the two views; target >= 10)",
                         f"{fast:.1f} ({verdict(fast, 10, True)})"))
            full = t_hta / t_full
            rows.append(("  HTA / tracelake with reports (target >= 3)", f"{full:.2f} ({verdict(full, 3, True)})"))
        scaling = _scaling(tmp)
        base = scaling[0][1]
        rows.append(("200 traces (`run --jobs N --no-reports`, process): seconds (speedup) by cores (target >= 1.8x at 2)",
                     ", ".join(f"{w}: {t:.1f} s ({base / t:.2f}x)" for w, t, _ in scaling)))
        for w, _, stages in scaling:
            rows.append((f"  --jobs {w}: seconds by stage (speedup)",
                         ", ".join(f"{stage} {s:.1f} s ({scaling[0][2][stage] / s:.2f}x)" for stage, s in stages.items())))
        ceiling = {w: _cpu_ceiling(w) for w, _, _ in scaling[1:]}
        rows.append(("  the machine's ceiling: N processes of a plain Python loop, speedup over one (median of 3)",
                     ", ".join(f"{w}: {c:.2f}x" for w, c in ceiling.items()) or "(one core)"))
        rows.append(("  tracelake's speedup / the ceiling",
                     ", ".join(f"{w}: {base / t / ceiling[w]:.2f}" for w, t, _ in scaling[1:]) or "(one core)"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rows.append(("machine load at the end", load_average()))
    return rows
