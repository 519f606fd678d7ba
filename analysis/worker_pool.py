"""The process pool of the batch job's ingest tasks and of the report pages.

Workers come from a fork server, not from the calling process: forking a process whose polars,
Arrow or DuckDB thread pools are running can deadlock the child (seen in the test suite). Each
worker's initializer (process_settings.start_worker) makes the process-wide settings before the
worker imports anything heavy; this module imports nothing heavy either.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from .process_settings import start_worker


def process_pool(workers: int) -> ProcessPoolExecutor:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context(method),
                               initializer=start_worker, initargs=(workers,))
