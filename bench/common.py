"""Timing, peak memory and machine info for the benchmarks. Ratios are measured within one run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACELAKE_CORPUS", REPO.parent / "shared"))
if not SHARED.is_absolute():
    SHARED = (REPO / SHARED).resolve()
HTA_PYTHON = Path(os.environ.get("HTA_PYTHON", REPO.parent / "hta-venv" / "bin" / "python"))
TRACELENS_PYTHON = Path(os.environ.get("TRACELENS_PYTHON", REPO.parent / "tracelens-venv" / "bin" / "python"))


def compile_package() -> None:
    """Byte-compile tracelake's modules, as `pip install` does: a checkout run with
    PYTHONDONTWRITEBYTECODE set (as on the shared machines) would otherwise compile every module from
    source in every fresh process, a cost no installed tracelake pays."""
    import compileall

    for folder in ("api", "ingest", "lake", "analysis", "jobs", "cli", "reports", "sql"):
        compileall.compile_dir(str(REPO / folder), quiet=1)


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " / ".join(f.read().split()[:3])


def paired(argv_a, argv_b, runs: int = 3, cwd: Path = REPO) -> tuple[float, float, float]:
    """Fresh processes A and B in turn (A B A B ...) after one warm-up each: (median wall of A,
    median wall of B, median of the per-pair ratios B/A). Pairs see the same machine load, so the
    ratio holds when the load drifts. argv_a, argv_b: argument lists, or functions of the run's
    number (0 is the warm-up) giving one. A command that fails raises RuntimeError."""
    import itertools
    import statistics

    counter = itertools.count()

    def once(argv):
        argv = argv(next(counter)) if callable(argv) else argv
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()[-500:]}")
        return time.perf_counter() - t0

    once(argv_a)
    once(argv_b)
    pairs = [(once(argv_a), once(argv_b)) for _ in range(runs)]
    return (statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
            statistics.median(b / a for a, b in pairs))


def verdict(value: float, target: float, higher_is_better: bool) -> str:
    ok = value >= target if higher_is_better else value <= target
    return "pass" if ok else "miss"


def best_of(fn, repeat: int = 3) -> float:
    """Best wall time of `repeat` runs (the least disturbed by other load on a shared machine)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run_measured(code: str, python: str = sys.executable) -> dict:
    """Run `code` in a fresh interpreter; it sets `result` (a dict). Adds peak RSS in MiB.

    Peak RSS is VmHWM of the child's own address space: getrusage's ru_maxrss would report the
    parent's peak too, because Linux carries it across fork and exec.
    """
    wrapper = (
        "import json\n"
        "from tracelake.jobs.process_settings import prefer_jemalloc\n"
        "prefer_jemalloc()\n"  # as the CLI does at start-up
        f"{code}\n"
        "out = dict(result)\n"
        "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM'))\n"
        "out['peak_rss_mib'] = int(hwm.split()[1]) / 1024\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([python, "-c", wrapper], capture_output=True, text=True, cwd=REPO)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores{mem}, Python {platform.python_version()}, {platform.system()}"
