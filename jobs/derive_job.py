"""The batch job's derivation step: the derivation tasks of lake/derive.py (`plan`) spread over a
local process pool or a Dask cluster; one task or one job runs in this process."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..lake import cores, layout, lock
from ..lake import derive as lake_derive
from ..lake.database import build_database
from ..lake.error_line import error_line


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


def derive_lake(lake: str | Path, jobs: int = 1, views: dict[str, str] | None = None) -> tuple[Path, list[str]]:
    """Derive what the lake's traces lack of `views` (view -> fingerprint; default: every
    materialized view) on `jobs` local workers, then rebuild its database (`tracelake relink`):
    (the database, the derivation's warnings). The caller holds the writer lock."""
    warnings = derive(lake, lake_derive.plan(Path(lake), jobs=jobs, views=views), jobs)
    return build_database(lake), warnings


def derive_absent(lake: str | Path, jobs: int = 1, views: set[str] | None = None) -> list[str] | None:
    """Derive the materialized views among `views` (default: all) that the lake does not keep yet
    (derive.kept: a lake that `tracelake ingest` wrote, of fewer than derive.DERIVE_FROM_TRACES
    traces, keeps those it was asked for) and rebuild its database, as `tracelake relink` does
    (derive_lake); from then on it keeps them (each later ingest derives them for its traces).
    For the report index, whose cross-run views (runs, run_comparison) cost far more over the base
    tables than over derived ones (docs/lake.md), and for a query (`tracelake sql`): the views it reads.
    Returns the derivation's warnings (a failed derivation is one: the views then read the base
    tables, as before); None when nothing was derived: the lake keeps them already, holds no
    trace, cannot be written, or another process writes it."""
    lake = Path(lake).resolve()
    if not layout.is_lake(lake):
        return None
    kept = lake_derive.kept(lake)  # a lake that keeps every view answers without listing its traces
    absent = {v: fp for v, fp in lake_derive.current().items() if (views is None or v in views) and v not in kept}
    if not absent or not layout.complete_trace_ids(lake):
        return None
    held = lock.try_lock(lake)
    if held is None:
        return None
    with held:
        try:
            return derive_lake(lake, jobs, absent)[1]
        except (OSError, duckdb.Error) as e:
            return [f"{lake}: views not derived, read from the base tables: {error_line(e)}"]
