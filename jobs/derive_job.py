"""The batch job's derivation step: the derivation tasks of lake/derive.py (`plan`) spread over a
local process pool or a Dask cluster; one task or one job runs in this process."""

from __future__ import annotations

from pathlib import Path

from ..lake import cores
from ..lake import derive as lake_derive


def derive(lake: str | Path, tasks: list, jobs: int = 1, executor: str = "local",
           scheduler: str | None = None) -> list[str]:
    """Run derivation tasks: in this process, a local process pool, or on a Dask cluster; returns
    their warnings."""
    lake = str(Path(lake).resolve())
    if not tasks:
        return []
    if executor != "dask" and (jobs <= 1 or len(tasks) == 1):
        return lake_derive.derive_here(lake, tasks)
    warnings: list[str] = []
    if executor == "dask":
        from distributed import Client

        with Client(scheduler) as client:
            for w in client.gather([client.submit(lake_derive.derive_scope, lake, s, t, pure=False)
                                    for s, t in tasks]):
                warnings.extend(w)
    else:
        from .worker_pool import process_pool

        workers = min(jobs, len(tasks))
        threads = cores.per_worker(workers)  # the job's cores the other workers leave
        with process_pool(workers) as pool:
            for future in [pool.submit(lake_derive.derive_scope, lake, s, t, threads) for s, t in tasks]:
                warnings.extend(future.result())
    lake_derive.drop_stale(lake)
    return warnings
