"""Thread pools of pool workers: a process per core, each with a share of the cores.

polars, pyarrow and DuckDB each start a thread pool as large as the machine. With one worker
process per core, every worker's pools together oversubscribe the cores many times over. The
pool's initializer runs before a worker imports any of them (this module imports nothing heavy)
and sizes their pools to cores / workers.
"""

from __future__ import annotations

import os


def limit_threads(workers: int) -> None:
    threads = str(max(1, (os.cpu_count() or 1) // max(1, workers)))
    for variable in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS"):  # OMP_*: sizes Arrow's CPU pool
        os.environ[variable] = threads
