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
process per core, those pools together oversubscribe the cores. A worker sizes them to
cores / workers before it imports them.
"""

from __future__ import annotations

import os
import sys


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
    threads = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
    for variable in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS"):  # OMP_*: sizes Arrow's CPU pool
        os.environ[variable] = threads


def start_worker(workers: int) -> None:
    """A pool worker's initializer: runs before the worker imports polars or pyarrow."""
    from ..lake.memory_budget import share_among

    prefer_jemalloc()
    limit_threads(workers)
    share_among(workers)  # its share of `--max-memory`
