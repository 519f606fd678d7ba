"""Summary views on a large lake (issue #5): seconds per view at growing row counts.

A real trace (the 2-rank DDP Nsight export: 24k kernels, 77k API calls) is ingested once and its
partitions are copied under new trace ids until the lake holds over 10M kernel rows. Each view is
then fully evaluated (`SELECT count(*) FROM (SELECT * FROM view)`) at 1/4, 1/2 and all copies.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from tracelake.ingest.dispatch import ingest_file
from tracelake.jobs.derive_job import ensure_derived
from tracelake.lake.database import build_database, connect
from tracelake.lake.layout import partition_dir
from tracelake.lake.version import __version__
from tracelake.lake.writer import write_trace

from .common import SHARED

SOURCE = "traces/nsys/nsys-2025.3.1_gpt2-ddp-2rank_h200x2.sqlite.gz"
VIEWS = ["kernel_summary", "kernel_summary_by_device", "memcpy_time_summary", "memcpy_size_summary",
         "memcpy_kind_summary", "gpu_summary", "api_summary", "nvtx_summary", "nvtx_gpu_summary"]
TARGET_KERNELS = 10_000_000


# Only the tables the summary views read are replicated (OS runtime calls and call stacks would
# make the lake tens of GB).
REPLICATED = ["traces", "kernels", "memcpy", "memset", "api_calls", "annotations"]


def _replicate(lake: Path, trace_id: str, copies: range) -> None:
    for i in copies:
        for table in REPLICATED:
            shutil.copytree(partition_dir(lake, table, trace_id), partition_dir(lake, table, f"copy{i:05d}-{trace_id}"))


def run() -> list[tuple[str, str]]:
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-views-"))
    rows = []
    try:
        lake = tmp / "lake"
        result = ingest_file(str(SHARED / SOURCE))
        write_trace(lake, result.trace_id, result.tables, tracelake_version=__version__)
        per_copy = result.tables["kernels"].num_rows
        total_copies = -(-TARGET_KERNELS // per_copy)
        timings: dict[str, list[float]] = {v: [] for v in VIEWS}
        sizes = []
        done = 1
        for copies in (total_copies // 4, total_copies // 2, total_copies):
            _replicate(lake, result.trace_id, range(done, copies))
            done = copies
            ensure_derived(lake)  # a lake of 8 traces and more keeps every materialized view
            build_database(lake)
            con = connect(lake)
            sizes.append(con.execute("SELECT count(*) FROM kernels").fetchone()[0])
            for view in VIEWS:
                t0 = time.perf_counter()
                con.execute(f"SELECT count(*) FROM (SELECT * FROM {view})").fetchone()
                timings[view].append(time.perf_counter() - t0)
            con.close()
        rows.append(("Summary views, kernel rows at 1/4, 1/2, all", " / ".join(f"{n / 1e6:.1f}M" for n in sizes)))
        for view in VIEWS:
            t = timings[view]
            per_m = " / ".join(f"{s / (n / 1e6):.3f}" for s, n in zip(t, sizes))
            rows.append((f"  {view}: s (s per M kernel rows)", f"{' / '.join(f'{s:.2f}' for s in t)} ({per_m})"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
