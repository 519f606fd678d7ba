"""No work twice (issue #51, item 4), as users run it: each command a fresh process.

- export: `tracelake export FILE --format perfetto` and `tracelake export --lake LAKE TRACE` (the lake
  as `tracelake ingest` wrote it: underived) against `tracelake ingest FILE` into a new lake, in turn
  (A B C A B C ...), the ratios taken run by run; wall time and peak RSS of each process. Targets:
  export <= 2x the ingest's time, in no more memory. FILE: the corpus's 1.2 MB, 56k-event PyTorch
  trace (else the bundled ResNet-50 sample).
- re-run: `tracelake run DIR --out OUT` over 25 corpus files (links in a temporary folder), then the
  same command again with nothing changed: seconds per unchanged file (target <= 0.05 s).
- demo: `make demo`'s run, `tracelake run tests/data --out NEW` (target < 10 s on an idle 2-core
  machine: the machine's load is stated beside it, and the process's CPU seconds).
- With TRACELAKE_BEFORE=/path/to/bin/tracelake (an earlier commit; its name in the results:
  TRACELAKE_BEFORE_LABEL), its export of FILE and its demo run too, in turn with the others.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO, SHARED, compile_package, load_average, verdict

TRACELAKE = [str(Path(sys.executable).with_name("tracelake"))]
EXPORTED = SHARED / "traces" / "pytorch" / "tracelens_mi300x_resnet_actckpt_train_rank0.json.gz"
SAMPLE = REPO / "tests" / "data" / "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz"
RERUN_FILES = 25
RUNS = 3
BEFORE = os.environ.get("TRACELAKE_BEFORE")
BEFORE_LABEL = os.environ.get("TRACELAKE_BEFORE_LABEL", BEFORE)


def process(argv: list[str]) -> tuple[float, float, float]:
    """(wall seconds, peak RSS in MiB, CPU seconds) of the command as a fresh process (os.wait4:
    that child's own, and its children's; not the fork server's workers)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    err = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)}: {err.strip()[-500:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def _export(tmp: Path) -> list[tuple[str, str]]:
    trace = EXPORTED if EXPORTED.exists() else SAMPLE
    lake = tmp / "export-lake"
    process(TRACELAKE + ["ingest", str(trace), "--lake", str(lake), "-q"])
    trace_id = subprocess.run(TRACELAKE + ["sql", "--lake", str(lake), "SELECT trace_id FROM traces", "--format", "csv"],
                              capture_output=True, text=True, check=True).stdout.split()[-1]

    def ingest(i: int):
        shutil.rmtree(tmp / "ingest", ignore_errors=True)
        return process(TRACELAKE + ["ingest", str(trace), "--lake", str(tmp / "ingest"), "-q"])

    def from_file(i: int):
        return process(TRACELAKE + ["export", str(trace), "-o", str(tmp / "file.json.gz")])

    def from_lake(i: int):
        return process(TRACELAKE + ["export", "--lake", str(lake), trace_id, "-o", str(tmp / "lake.json.gz")])

    def before(i: int):
        return process([BEFORE, "export", str(trace), "-o", str(tmp / "before.json.gz")])

    commands = (ingest, from_file, from_lake) + ((before,) if BEFORE else ())
    for f in commands:  # warm-up
        f(0)
    runs = [tuple(f(i) for f in commands) for i in range(RUNS)]

    def median(k: int, m: int) -> float:
        return statistics.median(r[k][m] for r in runs)

    def ratio(k: int, m: int) -> float:
        return statistics.median(r[k][m] / r[0][m] for r in runs)

    events = sum(1 for _ in subprocess.run(["zcat", str(tmp / "file.json.gz")], capture_output=True,
                                           check=True).stdout.splitlines()) - 2
    rows = [(f"`tracelake ingest` {trace.name} ({trace.stat().st_size / 1e6:.1f} MB), new lake (process, median of "
             f"{RUNS}, in turn with the exports)", f"{median(0, 0):.2f} s, peak RSS {median(0, 1):.0f} MiB")]
    for k, label in ((1, "`tracelake export FILE` (Perfetto JSON)"), (2, "`tracelake export --lake LAKE TRACE`, "
                                                                          "the lake `ingest` wrote (underived)")):
        time_ratio, memory_ratio = ratio(k, 0), ratio(k, 1)
        rows.append((f"{label}: {events:,} events", f"{median(k, 0):.2f} s, peak RSS {median(k, 1):.0f} MiB"))
        rows.append(("  / ingest, run by run: time (target <= 2.0); peak RSS (target <= 1.0)",
                     f"{time_ratio:.2f} ({verdict(time_ratio, 2.0, False)}); "
                     f"{memory_ratio:.2f} ({verdict(memory_ratio, 1.0, False)})"))
    if BEFORE:
        rows.append((f"  `tracelake export FILE` of {BEFORE_LABEL} (same runs); / ingest: time; peak RSS",
                     f"{median(3, 0):.2f} s, peak RSS {median(3, 1):.0f} MiB; {ratio(3, 0):.2f}; {ratio(3, 1):.2f}"))
    return rows


def _rerun(tmp: Path) -> list[tuple[str, str]]:
    files = sorted(p for p in (SHARED / "traces").rglob("*") if p.is_file() and p.name.endswith(
        (".json.gz", ".sqlite", ".sqlite.gz")) and p.stat().st_size < 3e6)[:RERUN_FILES]
    folder = tmp / "corpus"
    for p in files:
        link = folder / p.relative_to(SHARED / "traces")
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(p)
    out = tmp / "rerun"
    first = process(TRACELAKE + ["run", str(folder), "--out", str(out), "-q"])
    again = [process(TRACELAKE + ["run", str(folder), "--out", str(out), "-q"]) for _ in range(RUNS)]
    per_file = statistics.median(r[0] for r in again) / len(files)
    return [(f"`tracelake run` over {len(files)} corpus files (< 3 MB each), with reports: first run (process)",
             f"{first[0]:.1f} s"),
            (f"  the same again, nothing changed (process, median of {RUNS})",
             f"{statistics.median(r[0] for r in again):.2f} s, peak RSS {statistics.median(r[1] for r in again):.0f} MiB"),
            ("  per unchanged file (target <= 0.05 s)", f"{per_file:.3f} s ({verdict(per_file, 0.05, False)})")]


def _demo(tmp: Path) -> list[tuple[str, str]]:
    def demo(i: int, tracelake: list[str] = TRACELAKE):
        out = tmp / f"demo-{'before' if tracelake != TRACELAKE else 'now'}-{i}"
        return process(tracelake + ["run", str(REPO / "tests" / "data"), "--out", str(out), "-q"])

    demo(0)
    runs, earlier = [], []
    for i in range(RUNS):
        runs.append(demo(i + 1))
        if BEFORE:
            earlier.append(demo(i + 1, [BEFORE]))
    seconds = statistics.median(r[0] for r in runs)
    rows = [(f"  the same with {BEFORE_LABEL} (in turn); now / then, run by run",
             f"{statistics.median(r[0] for r in earlier):.2f} s, peak RSS {statistics.median(r[1] for r in earlier):.0f} "
             f"MiB; {statistics.median(a[0] / b[0] for a, b in zip(runs, earlier)):.2f}")] if BEFORE else []
    return [(f"`make demo`'s run: `tracelake run tests/data --out NEW` (process, median of {RUNS}; target < 10 s "
             "on an idle machine)", f"{seconds:.2f} s ({verdict(seconds, 10.0, False)}), "
                                    f"peak RSS {statistics.median(r[1] for r in runs):.0f} MiB"),
            ("  its CPU seconds, user + system (a bound on an idle machine's wall time where all of it runs in "
             "the process; workers of the fork server not counted)", f"{statistics.median(r[2] for r in runs):.2f} s"),
            *rows]


def run() -> list[tuple[str, str]]:
    compile_package()
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    with tempfile.TemporaryDirectory(prefix="tracelake-bench-") as tmp:
        rows += _export(Path(tmp))
        rows.append(("  machine load after the exports", load_average()))
        rows += _demo(Path(tmp))
        if (SHARED / "traces").is_dir():
            rows += _rerun(Path(tmp))
    rows.append(("machine load at the end", load_average()))
    return rows
