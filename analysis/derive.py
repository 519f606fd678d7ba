"""Materialized views: per-trace derived tables in the lake, served by the database under the view's name.

A view whose .sql file says `-- materialize: per trace` (analysis/catalog.py) is computed for each
trace from that trace's own tables (and its run's other ranks, which some views compare) and written
as a lake partition under <lake>/derived/<view>@<fingerprint>/, one per trace
(ingest/lake_layout.py). In the lake's database the view is then a plain scan of those partitions
(`serve`), so `WHERE trace_id = X` reads one small file whatever the lake's size, and views over
it (runs, stragglers, findings...) read the stored rows instead of evaluating it over every trace.

When: `tracelake run` derives the traces it ingested and their runs' other ranks in its worker
pool (local or Dask) after the ingest; any command that (re)builds the database first derives
whatever is missing, in this process (a new lake, a trace ingested by `tracelake ingest`, a view
whose SQL changed: its fingerprint changed, so it has no partitions yet). That reads the lake's
Parquet, never the trace files: `tracelake relink` does it explicitly (--jobs N in parallel).

The rows are those of the view evaluated on a database holding just the trace's run scope
(database.ScopedDatabase), which equals the view over the whole lake for that trace because
every materialized view is per run: tests/test_derive.py checks that for every one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

import duckdb
from tracelake.ingest import lake_layout

from . import catalog

# Views most materialized views read: evaluated once per scope (a temp table shadows the view).
_SHARED = ["gpu_ops", "gpu_op_class", "api", "gpu_active_range", "gpu_busy", "nvtx_ranges", "rank_runs"]


def current() -> dict[str, str]:
    """Materialized view -> fingerprint of its SQL, in catalog (dependency) order."""
    return catalog.materialized()


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def missing(lake: Path, views: dict[str, str] | None = None) -> dict[str, set[str]]:
    """trace_id -> the materialized views it has no current partition of (complete traces only)."""
    views = current() if views is None else views
    complete = lake_layout.complete_trace_ids(lake)
    out: dict[str, set[str]] = {}
    for view, fp in views.items():
        for t in complete - lake_layout.derived_trace_ids(lake, view, fp):
            out.setdefault(t, set()).add(view)
    return out


def run_keys(lake: Path, trace_ids: Iterable[str] | None = None) -> dict[str, str]:
    """trace_id -> the key of the traces that may be ranks of one run with it (rank_runs groups
    PyTorch ranks of one folder and world size; an Nsight export is its own run): a superset of
    its run, read from the `traces` partitions alone."""
    from . import lake_scan

    source = (lake_scan.all_source(lake, "traces") if trace_ids is None
              else lake_scan.scoped_source(lake, "traces", sorted(trace_ids)))
    if not source:
        return {}
    rows = duckdb.sql(
        "SELECT trace_id, CASE WHEN source = 'pytorch' AND rank IS NOT NULL AND clock_offset_ns IS NOT NULL "
        "THEN regexp_replace(path, '[^/]*$', '') || '|' || world_size END AS run_key "
        f"FROM {source}").fetchall()
    return {t: key or f"trace|{t}" for t, key in rows}


def plan(lake: Path, fresh: Iterable[str] = (), changed_folders: Iterable[str] = ()) -> list[tuple[list[str], dict]]:
    """The derivation tasks: (scope, {trace_id: [views]}) per run scope. Fresh traces, their runs'
    other ranks and the PyTorch ranks in `changed_folders` (where a trace was removed) get every
    view; other traces get the views they have no current partition of."""
    views = current()
    need = {t: set(v) for t, v in missing(lake, views).items()}
    fresh, changed_folders = set(fresh), set(changed_folders)
    if not (need or fresh or changed_folders):
        return []  # (reading the traces table of a large lake costs seconds)
    keys = run_keys(lake)
    fresh_keys = {keys[t] for t in fresh if t in keys}
    folders = tuple(f.rstrip("/") + "/" for f in changed_folders)
    for t, key in keys.items():
        if key in fresh_keys or (folders and key.startswith(folders) and key.count("|") == 1):
            need[t] = set(views)
    scopes: dict[str, list[str]] = {}
    for t, key in keys.items():
        scopes.setdefault(key, []).append(t)
    tasks = []
    for members in scopes.values():
        targets = {t: [v for v in views if v in need[t]] for t in sorted(members) if need.get(t)}
        if targets:
            tasks.append((sorted(members), targets))
    return tasks


_DATABASES: dict[str, object] = {}  # per process: lake -> its ScopedDatabase


def derive_scope(lake: str, scope: list[str], targets: dict[str, list[str]]) -> list[str]:
    """Compute and publish the derived partitions of `targets` from a database of `scope`'s tables.
    Returns warnings (a view that fails on a trace is left without partitions, and said)."""
    from .database import ScopedDatabase

    db = _DATABASES.get(lake)
    if db is None:
        db = _DATABASES[lake] = ScopedDatabase(lake)
    con = db.load(scope)
    fingerprints = current()
    wanted = [v for v in fingerprints if any(v in vs for vs in targets.values())]
    staging = Path(lake) / lake_layout.STAGING / f"derive.{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    shadows, warnings = [], []
    try:
        for view in _SHARED:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM main.{view}")
            shadows.append(view)
        for view in wanted:
            try:
                con.execute(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM main.{view}")
            except duckdb.Error as e:
                warnings.append(f"{view}: not derived for {', '.join(targets)}: {str(e).splitlines()[0][:200]}")
                continue
            shadows.append(view)
            for trace_id, vs in targets.items():
                if view not in vs:
                    continue
                staged = staging / f"{view}.{trace_id}.parquet"
                con.execute(f"COPY (SELECT * EXCLUDE (trace_id) FROM temp.{view} WHERE trace_id = {_quote(trace_id)}) "
                            f"TO {_quote(str(staged))} (FORMAT parquet, COMPRESSION zstd)")
                lake_layout.publish_derived(Path(lake), view, fingerprints[view], trace_id, staged)
    finally:
        for view in shadows:
            con.execute(f"DROP TABLE IF EXISTS temp.{view}")
        lake_layout.discard_staging(staging)
    return warnings


def derive(lake: str | Path, tasks: list, jobs: int = 1, executor: str = "local",
           scheduler: str | None = None) -> list[str]:
    """Run derivation tasks: in this process, a local process pool, or on a Dask cluster."""
    lake = str(Path(lake).resolve())
    warnings: list[str] = []
    if not tasks:
        return warnings
    if executor == "dask":
        from distributed import Client

        with Client(scheduler) as client:
            for w in client.gather([client.submit(derive_scope, lake, s, t, pure=False) for s, t in tasks]):
                warnings.extend(w)
    elif jobs > 1 and len(tasks) > 1:
        from .worker_pool import process_pool

        with process_pool(min(jobs, len(tasks))) as pool:
            for future in [pool.submit(derive_scope, lake, s, t) for s, t in tasks]:
                warnings.extend(future.result())
    else:
        for s, t in tasks:
            warnings.extend(derive_scope(lake, s, t))
    lake_layout.remove_derived_except(Path(lake), {f"{v}@{fp}" for v, fp in current().items()})
    return warnings


def serve(con, lake: Path) -> list[str]:
    """Replace each materialized view on `con` (installed over empty base tables) by a scan of its
    partitions, same columns and types (analysis/lake_scan.py). Views without partitions (an
    empty lake) stay as they are."""
    from . import lake_scan

    served = []
    for view, fp in current().items():
        if not lake_layout.has_derived(lake, view, fp):
            continue
        cols = con.execute(f"DESCRIBE {view}").fetchall()
        select = ", ".join(f'CAST("{c[0]}" AS {c[1]}) AS "{c[0]}"' if c[0] != "trace_id" else "trace_id"
                           for c in cols)
        empty = "SELECT " + ", ".join(f'CAST(NULL AS {c[1]}) AS "{c[0]}"' for c in cols) + " WHERE false"
        lake_scan.placeholder(con, view, select, empty)
        # no union_by_name: the files of one fingerprint have one schema, and unifying schemas
        # opens every file, which defeats the pruning of partitions by trace_id (0.3 s per 1,000 traces)
        lake_scan.point(con, view, lake, lake_layout.derived_folder(view, fp))
        served.append(view)
    return served
