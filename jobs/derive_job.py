"""Deriving a lake's materialized views: `ensure_derived`, the one trigger every command uses, and
the derivation tasks of lake/derive.py (`plan`) spread over a local process pool or a Dask
cluster; one task or one job runs in this process."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import BrokenExecutor
from pathlib import Path

import duckdb

from ..lake import cores, layout, lock, materialize
from ..lake import derive as lake_derive
from ..lake.database import update_database
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


def ensure_derived(lake: str | Path, views: Iterable[str] | None = (), *, fresh: Iterable[str] = (),
                   changed_folders: Iterable[str] = (), held: bool = False, jobs: int = 1, executor: str = "local",
                   scheduler: str | None = None, on_tasks: Callable[[list], None] = lambda tasks: None) -> list[str]:
    """Derive what the lake lacks of the views it keeps (materialize.kept_views) and of `views`
    (the materialized views the caller reads; None: every one), on `jobs` workers: the one trigger
    of a derivation (lake/materialize.py decides what is lacking, lake/derive.py derives).

    - A writer, holding the lake's lock (ingest, run, relink), passes the traces it wrote (`fresh`:
      they and their runs' other ranks get every view; `held`: they are held, and published by their
      derivation) and the folders a trace left (`changed_folders`); it writes the database when done.
    - A reader derives only what is lacking: a view it reads that the lake does not keep yet (a lake
      `tracelake ingest` wrote, of a few traces: from then on it keeps it, and each later ingest
      derives it for its traces), or a view the lake keeps whose SQL changed (a new tracelake). It
      takes the lock without waiting, and rebuilds the database after. Without it (another process
      writes, the lake is read-only) nothing is derived: the views the lake lacks are evaluated from
      its base tables (the same rows, slower: over the base tables `findings` took 22.6 s on the 4
      bundled samples).

    on_tasks(tasks) is told the derivation tasks before they run. Returns the derivation's warnings
    (a failed derivation is one: the views then read the base tables, as before)."""
    lake = Path(lake).resolve()
    views = None if views is None else set(views)
    if lock.holds(lake):  # (a new lake's traces may all be held yet: no traces/ folder)
        return _derive_lacking(lake, views, materialize.kept_views(lake), fresh, changed_folders, held, jobs,
                               executor, scheduler, on_tasks)
    if not layout.is_lake(lake) or not layout.complete_trace_ids(lake):
        return []
    kept = materialize.kept_views(lake)  # listed once for the checks and the derivation
    if not (materialize.absent(lake, views, kept) or materialize.stale(lake, kept)):
        return []
    taken = lock.try_lock(lake)
    if taken is None:
        return []
    with taken:
        try:
            warnings = _derive_lacking(lake, views, kept, fresh, changed_folders, held, jobs, executor, scheduler,
                                       on_tasks)
            update_database(lake)
            return warnings
        except (OSError, duckdb.Error, BrokenExecutor) as e:  # a worker killed (out of memory): the query goes on
            return [f"{lake}: views not derived, read from the base tables: {error_line(e)}"]


def _derive_lacking(lake: Path, views: set[str] | None, kept: dict[str, str], fresh, changed_folders, held, jobs,
                    executor, scheduler, on_tasks) -> list[str]:
    """Derive the views the lake keeps and `views` (None: all), in catalog order, where traces lack them."""
    wanted = {v: fp for v, fp in materialize.view_fingerprints().items() if v in kept or views is None or v in views}
    if not wanted:
        return []
    tasks = lake_derive.plan(lake, fresh, changed_folders, jobs, held=held, views=wanted)
    on_tasks(tasks)
    return derive(lake, tasks, jobs, executor, scheduler)
