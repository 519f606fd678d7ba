"""`tracelake stats FILE` against AMD TraceLens's perf report on the same PyTorch traces (issue #29).

TraceLens (github.com/AMD-AGI/TraceLens, MIT) runs in its own virtualenv, never in tracelake's:
    git clone <TraceLens repository> ../tracelens-src
    python3 -m venv ../tracelens-venv && ../tracelens-venv/bin/pip install ../tracelens-src
TRACELENS_PYTHON names its interpreter (default ../tracelens-venv/bin/python beside the checkout).

Each command is a fresh process, A and B in turn (A B A B ...) after one warm-up each, the ratio
taken pair by pair (bench/common.paired); the load average is recorded at the start and the end.
On the 22 MB GPT-2 trace and the 89 MB 12-step one:
- TraceLens: TRACELENS_PYTHON -m TraceLens.Reporting.generate_perf_report_pytorch
      --profile_json_path FILE --output_csvs_dir DIR --enable_kernel_summary
  (= the TraceLens_generate_perf_report_pytorch command: its default sheets plus the kernel summary,
  written as CSV, its lightest output: without an output path it writes an .xlsx beside the trace,
  1.18x the CSV run's time on the 22 MB trace, 2 paired runs at load 4.8);
- `tracelake stats FILE` (its default reports: summary, kernel_summary, memcpy_kind_summary,
  idle_breakdown, findings, printed as tables; nothing written);
- `tracelake stats FILE --report kernel_summary`.
Target (issue #29): TraceLens / tracelake stats >= 5, pair by pair.

Agreement: TraceLens's kernel_summary sheet (rows per parent op, kernel name and stream) summed per
kernel name, against `tracelake stats FILE --report kernel_summary --format csv` (total_ns,
instances per name); the row says how many names match in count and the largest difference in total.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from .common import REPO, SHARED, TRACELENS_PYTHON, compile_package, load_average, paired, verdict

TRACELAKE = [str(Path(sys.executable).with_name("tracelake"))]
TRACES = [("22 MB", "traces/pytorch/torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz"),
          ("89 MB", "traces/pytorch/torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz")]


def _tracelens(path: str, out: Path):
    return lambda i: [str(TRACELENS_PYTHON), "-m", "TraceLens.Reporting.generate_perf_report_pytorch",
                      "--profile_json_path", path, "--output_csvs_dir", str(out / f"run{i}"),
                      "--enable_kernel_summary"]


def tracelens_kernel_totals(kernel_summary_csv: Path) -> dict[str, tuple[int, float]]:
    """TraceLens's kernel_summary sheet per kernel name: (instances, total µs)."""
    totals: dict[str, list] = defaultdict(lambda: [0, 0.0])
    with open(kernel_summary_csv, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            entry = totals[row["Kernel name"]]
            entry[0] += int(row["Kernel duration (µs)_count"])
            entry[1] += float(row["Kernel duration (µs)_sum"])
    return {name: (n, us) for name, (n, us) in totals.items()}


def _agreement(path: str, kernel_summary_csv: Path) -> str:
    done = subprocess.run(TRACELAKE + ["stats", path, "--report", "kernel_summary", "--format", "csv"],
                          capture_output=True, text=True, cwd=REPO, check=True)
    ours = {r["name"]: (int(r["instances"]), int(r["total_ns"])) for r in csv.DictReader(io.StringIO(done.stdout))}
    theirs = tracelens_kernel_totals(kernel_summary_csv)
    same = [n for n in theirs if n in ours and ours[n][0] == theirs[n][0]]
    worst_ns = max((abs(ours[n][1] - theirs[n][1] * 1000) for n in same), default=0.0)
    total_ours, total_theirs = sum(v[1] for v in ours.values()), sum(v[1] for v in theirs.values()) * 1000
    return (f"{len(same)} of {len(theirs)} TraceLens names ({len(ours)} in tracelake) with equal count; "
            f"largest difference per name {worst_ns:.1f} ns; all kernels {total_theirs / 1e6:.3f} ms vs "
            f"{total_ours / 1e6:.3f} ms")


def run() -> list[tuple[str, str]]:
    if not TRACELENS_PYTHON.exists():
        return [("TraceLens", f"not measured: no {TRACELENS_PYTHON} (set TRACELENS_PYTHON)")]
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-tracelens-"))
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    try:
        for size, rel in TRACES:
            path = str(SHARED / rel)
            for label, extra in (("`tracelake stats FILE` (default reports)", []),
                                 ("`tracelake stats FILE --report kernel_summary`", ["--report", "kernel_summary"])):
                out = tmp / f"{size[:2]}{len(extra)}"
                t_ours, t_theirs, ratio = paired(TRACELAKE + ["stats", path, *extra], _tracelens(path, out), runs=3)
                rows.append((f"{size} trace: {label}, process, median of 3 paired runs", f"{t_ours:.2f} s"))
                rows.append(("  TraceLens perf report process (same pairs)", f"{t_theirs:.2f} s"))
                rows.append(("  TraceLens / tracelake, pair by pair (target >= 5, issue #29)",
                             f"{ratio:.1f} ({verdict(ratio, 5, True)})"))
            rows.append((f"{size} trace: kernel time per name, TraceLens kernel_summary vs tracelake kernel_summary",
                         _agreement(path, next(out.glob("run*/kernel_summary.csv")))))
            rows.append(("  machine load after it", load_average()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
