"""The process pool of the batch job's ingest tasks and of the report pages.

Workers come from a fork server, not from the calling process: forking a process whose polars,
Arrow or DuckDB thread pools are running can deadlock the child (seen in the test suite).

polars and pyarrow each start a thread pool as large as the machine; with a worker process per
core, those pools together oversubscribe the cores. Each worker's initializer runs before it
imports them (this module imports nothing heavy) and sizes them to cores / workers.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor


def limit_threads(workers: int) -> None:
    threads = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
    for variable in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS"):  # OMP_*: sizes Arrow's CPU pool
        os.environ[variable] = threads


def process_pool(workers: int) -> ProcessPoolExecutor:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=limit_threads, initargs=(workers,))
