"""Process-wide settings, made once at program start: by the CLI's main() and by each worker
process's initializer (jobs/worker_pool.py), never on import. Library users (tests, benches,
notebooks) get tracelake's results either way; these settings only change speed and memory.

Allocator: Arrow's default pool (mimalloc) keeps what ingest frees, so peak memory grows with
every temporary column; with jemalloc, which hands freed memory back, the peak RSS of ingesting
and writing the 89 MB reference trace is 259 MiB instead of 308, at the same speed. Arrow reads
ARROW_DEFAULT_MEMORY_POOL when it starts, which also covers its C++ code (the Parquet writer); if
pyarrow is already imported, the Python-side default pool is switched instead. A value the user
set is left alone.

Thread pools: polars and pyarrow each start a thread pool as large as the machine; with a worker
process per core, those pools together oversubscribe the cores. A worker sizes them to its share
of the job's cores (`--jobs`, else the machine's) before it imports them. With `--jobs N` its
DuckDB connections get that share too (lake/cores.py), so the job keeps about N cores busy; by
default DuckDB takes every core in each worker, as before (limiting it there too gave
`tracelake run ../shared/traces` 1.10x the time, 3 paired runs spread 0.88-1.27).
"""

from __future__ import annotations

import os
import sys

from ..lake import cores


def prefer_jemalloc() -> None:
    if os.environ.get("ARROW_DEFAULT_MEMORY_POOL") or sys.platform == "win32":  # no jemalloc on Windows
        return
    if "pyarrow" not in sys.modules:
        os.environ["ARROW_DEFAULT_MEMORY_POOL"] = "jemalloc"
        return
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except NotImplementedError:  # a pyarrow build without jemalloc
        pass


def limit_threads(workers: int) -> None:
    threads = str(cores.per_worker(workers))
    for variable in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS"):  # OMP_*: sizes Arrow's CPU pool
        os.environ[variable] = threads
    if cores.bounded():  # `--jobs N`: DuckDB too
        os.environ[cores.ENV_THREADS] = threads


def use_cores(jobs: int | None) -> None:
    """The CLI's `--jobs N`: the job keeps about N cores busy (its worker processes share them; the
    calling process, deriving or rendering alone, uses N threads)."""
    if jobs:
        os.environ[cores.ENV_CORES] = str(jobs)


def start_worker(workers: int) -> None:
    """A pool worker's initializer: runs before the worker imports polars or pyarrow."""
    from ..lake.memory_budget import share_among

    prefer_jemalloc()
    limit_threads(workers)
    share_among(workers)  # its share of `--max-memory`
