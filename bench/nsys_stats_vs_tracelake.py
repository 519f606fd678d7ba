"""tracelake against the tool users would otherwise run: NVIDIA's `nsys stats` and `nsys analyze`.

Runs on the GPU machine, where Nsight Systems is installed (not part of `make bench`):

    python3 bench/nsys_stats_vs_tracelake.py --nsys PATH/TO/nsys --tracelake 'python3 -m tracelake.cli.main' \
        EXPORT.sqlite [EXPORT.sqlite ...]

Every command is timed as a fresh process, end to end (median of --runs, after one warm-up), on the
same machine in the same run:
- nsys: `nsys stats` producing cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum,
  cuda_api_sum and nvtx_sum as CSV in one process, plus `nsys analyze` for the gpu_gaps and
  gpu_time_util rules;
- tracelake, two ways a user runs it:
  - `tracelake stats EXPORT --report <NVIDIA's 7 names> --format csv`: one process, like `nsys
    stats` (a throwaway lake, the views evaluated on the file's rows);
  - `tracelake ingest EXPORT --lake fresh_dir` (a lake kept for later SQL: database and derived
    tables), then one `tracelake sql --format csv` process per matching view.
Prints a Markdown table. The GPU machine's run (bench/nsys_stats_device.sh: how tracelake and its
dependencies get there) is stored with its command, device, date and notes in
bench/results/nsys_stats_vs_tracelake.json ("text"), which `python -m bench` renders into
bench/RESULTS.md with the cases it runs itself (bench/__main__.py ELSEWHERE).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPORTS = ["cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_api_sum", "nvtx_sum"]
RULES = ["gpu_gaps", "gpu_time_util"]
# NVIDIA's report or rule -> the tracelake view that computes the same thing (docs/sql.md)
VIEWS = {"cuda_gpu_kern_sum": "kernel_summary", "cuda_gpu_mem_time_sum": "memcpy_time_summary",
         "cuda_gpu_mem_size_sum": "memcpy_size_summary", "cuda_api_sum": "api_summary_nsys", "nvtx_sum": "nvtx_summary",
         "gpu_gaps": "gpu_gaps", "gpu_time_util": "gpu_utilization"}


def timed(argv: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit(f"{shlex.join(argv)} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def medians(runs: int, once) -> list[float]:
    """Each part's median over `runs` calls of once(), after one warm-up call (page cache,
    bytecode, nsys' and tracelake's caches)."""
    once()
    results = [once() for _ in range(runs)]
    return [statistics.median(r[i] for r in results) for i in range(len(results[0]))]


def nsys_side(nsys: str, export: Path, work: Path) -> tuple[float, float]:
    stats = [nsys, "stats", "--force-overwrite", "true", "--format", "csv", "--output", str(work / "stats"),
             "--report", ",".join(REPORTS), str(export)]
    analyze = [nsys, "analyze", "--force-overwrite", "true", "--format", "csv", "--output", str(work / "analyze"),
               "--rule", ",".join(RULES), str(export)]
    return timed(stats), timed(analyze)


def tracelake_side(tracelake: list[str], export: Path, work: Path) -> tuple[float, float, float]:
    stats = timed([*tracelake, "stats", str(export), "--format", "csv", "--report", ",".join(REPORTS + RULES)])
    lake = work / "lake"
    shutil.rmtree(lake, ignore_errors=True)
    ingest = timed([*tracelake, "ingest", str(export), "--lake", str(lake)])
    views = sum(timed([*tracelake, "sql", "--lake", str(lake), "--format", "csv", f"SELECT * FROM {view}"])
                for view in VIEWS.values())
    return stats, ingest, views


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nsys", required=True)
    parser.add_argument("--tracelake", required=True, help="the tracelake command, e.g. 'tracelake'")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("exports", nargs="+", type=Path)
    args = parser.parse_args()
    tracelake = shlex.split(args.tracelake)
    print("| export | nsys stats (5 reports) | nsys analyze (2 rules) | nsys total | tracelake stats (the 7, one "
          "process) | nsys / tracelake stats | tracelake ingest | tracelake 7 views (a sql process each) | "
          "ingest + views | nsys / (ingest + views) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for export in args.exports:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            nsys = partial(nsys_side, args.nsys, export, work)
            tl = partial(tracelake_side, tracelake, export, work)
            stats, analyze = medians(args.runs, nsys)
            ours_stats, ingest, views = medians(args.runs, tl)
        lake, theirs = ingest + views, stats + analyze
        print(f"| {export.name} | {stats:.2f} s | {analyze:.2f} s | {theirs:.2f} s | {ours_stats:.2f} s | "
              f"{theirs / ours_stats:.2f} | {ingest:.2f} s | {views:.2f} s | {lake:.2f} s | {theirs / lake:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
