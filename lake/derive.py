"""Materialized views: per-trace derived tables in the lake, served by the database under the view's name.

A view whose .sql file says `-- materialize: per trace` (lake/catalog.py) is computed for each
trace from that trace's own tables (and its run's other ranks, which some views compare) and written
as a lake partition under <lake>/derived/<view>@<fingerprint>/, one per trace
(lake/layout.py). In the lake's database the view is then a plain scan of those partitions
(`serve`), so `WHERE trace_id = X` reads one small file whatever the lake's size, and views over
it (runs, stragglers, findings...) read the stored rows instead of evaluating it over every trace.

When: jobs/derive_job.ensure_derived, the one trigger, asks lake/materialize.py what a lake
keeps and lacks and runs the tasks of `plan` here or in the batch job's worker pool (local or
Dask): `tracelake run` after its ingest, `ingest` for the views the lake keeps, a reader (a query,
the report index, relink) for what it reads. That reads the lake's Parquet, never the trace files.

The rows are those of the view evaluated on a database holding just the trace's run scope
(_scope_database), which equals the view over the whole lake for that trace because
every materialized view is per run: tests/test_derive.py checks that for every one. For the same
reason several runs can be derived together: `plan` batches them (see BATCH below).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import duckdb

from . import base_tables, catalog, cores, layout, materialize, memory_budget, scan
from .catalog_template import in_memory_catalog
from .error_line import first_line
from .served_views import typed_select
from .sql_literal import sql_string


def run_keys(lake: Path, trace_ids: Iterable[str] | None = None) -> dict[str, str]:
    """trace_id -> the key of the traces that may be ranks of one run with it (rank_runs groups
    PyTorch ranks of one folder and world size; an Nsight export is its own run): a superset of
    its run, read from the `traces` partitions alone."""
    return {t: key for t, (key, _) in _trace_facts(lake, trace_ids).items()}


def _trace_facts(lake: Path, trace_ids: Iterable[str] | None = None,
                 held: dict[str, Path] | None = None) -> dict[str, tuple[str, int]]:
    """trace_id -> (run key, event count); of the traces `held` too (read from their folders)."""
    source = (scan.all_source(lake, "traces") if trace_ids is None
              else scan.scoped_source(lake, "traces", sorted(trace_ids), held))
    if not source:
        return {}
    rows = duckdb.sql(
        "SELECT trace_id, CASE WHEN source = 'pytorch' AND rank IS NOT NULL AND clock_offset_ns IS NOT NULL "
        "THEN regexp_replace(path, '[^/]*$', '') || '|' || world_size END AS run_key, "
        f"coalesce(event_count, 0) FROM {source}").fetchall()
    return {t: (key or f"trace|{t}", events) for t, key, events in rows}


# BATCH. Derivation tasks are batched: one database of several runs' traces evaluates each view once for
# all of them, so DuckDB's fixed cost of planning and running ~100 deep views (about 1 s per
# scope, whatever its size) is paid per batch, not per run. Deriving the 37 traces of
# ../shared/traces on one core: 26 s as one task per run, 17.7 s in batches of 500k events,
# 10.4 s as one batch. A batch's memory grows with its events (about BYTES_PER_EVENT: 3.3 GB peak
# RSS for the corpus's 2.8M events in one batch; 5.4 GB for the 3.4M events of bench big_input's
# trace), so a batch holds at most MEMORY_SHARE of the machine's memory divided among the workers,
# or a worker's share of the job's `--max-memory` (lake/memory_budget.py), unless one run alone is larger.
BYTES_PER_EVENT = 1600
MEMORY_SHARE = 0.25
MIN_BATCH_EVENTS = 100_000
# A batch's seconds on one core: planning every view, then its events (the corpus as one batch above).
BATCH_SECONDS, SECONDS_PER_EVENT = 1.0, 3.4e-6


def batch_seconds(events: int) -> float:
    """About how long deriving one batch of `events` trace events takes on one core."""
    return BATCH_SECONDS + SECONDS_PER_EVENT * events


def batch_budget(jobs: int) -> int:
    """Trace events per batch when `jobs` workers derive at once."""
    budget = memory_budget.job_budget()
    memory = budget if budget is not None else _memory_bytes() * MEMORY_SHARE
    return max(MIN_BATCH_EVENTS, int(memory / max(1, jobs) / BYTES_PER_EVENT))


def _memory_bytes() -> int:
    """Physical memory, or the cgroup's limit where lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        return min(total, int(limit)) if limit.isdigit() else total
    except OSError:
        return total


def plan(lake: Path, fresh: Iterable[str] = (), changed_folders: Iterable[str] = (),
         jobs: int = 1, held: bool = False, views: dict[str, str] | None = None) -> list[tuple[list[str], dict]]:
    """The derivation tasks: (scope, {trace_id: [views]}), each a batch of whole run scopes (at least
    `jobs` batches where there are that many runs). Fresh traces, their runs' other ranks and the
    PyTorch ranks in `changed_folders` (where a trace was removed) get every view; other traces get
    the views they have no current partition of. With `held`, the writer's held traces
    (layout.hold: their derivation publishes them) are fresh and count as in the lake, and the
    traces they replace do not; without it (a database rebuilt by a reader after a writer was
    killed) they are left for the next writer to remove. `views`: the materialized views to derive
    (view -> fingerprint; default: all)."""
    views = materialize.view_fingerprints() if views is None else views
    need = {t: set(v) for t, v in materialize.missing_partitions(lake, views).items()}
    held = layout.held_traces(lake) if held else {}
    fresh, changed_folders = set(fresh) | set(held), set(changed_folders)
    if not (need or fresh or changed_folders):
        return []  # (reading the traces table of a large lake costs seconds)
    facts = _trace_facts(lake)
    if held:
        for t in layout.replaced_by_held(lake) - set(held):
            facts.pop(t, None)
        facts.update(_trace_facts(lake, held, held))
    keys = {t: key for t, (key, _) in facts.items()}
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
    return batches(tasks, {t: events for t, (_, events) in facts.items()}, jobs, batch_budget(jobs))


def batches(tasks: list[tuple[list[str], dict]], events: dict[str, int], jobs: int,
            budget: int) -> list[tuple[list[str], dict]]:
    """Tasks merged into batches of about `budget` events, at least `jobs` of them (or one per task):
    the largest tasks first, each into the batch with the fewest events so far."""
    if len(tasks) <= 1:
        return tasks
    size = [sum(events.get(t, 0) for t in scope) for scope, _ in tasks]
    n = min(len(tasks), max(jobs, -(-sum(size) // max(1, budget))))
    bins: list[tuple[int, list[str], dict]] = [(0, [], {}) for _ in range(n)]
    for i in sorted(range(len(tasks)), key=lambda i: -size[i]):
        k = min(range(n), key=lambda k: bins[k][0])
        total, scope, targets = bins[k]
        bins[k] = (total + size[i], scope + tasks[i][0], {**targets, **tasks[i][1]})
    return [(sorted(scope), dict(sorted(targets.items()))) for _, scope, targets in bins if targets]


def _scope_database(lake: str, scope: list[str], held: dict[str, Path], views: frozenset[str]):
    """A fresh in-memory database for one derivation: the catalog copied from the cached template
    (COPY FROM DATABASE, ~50 ms; installed afresh when there is no cache folder) with the scope's
    rows as tables of main, so that every cursor sees them, and the tables that replace the
    materialized views as they are computed (a TEMP table would be its own cursor's only). The
    traces in `held` are read from their held folders; base tables none of `views` reads stay empty.
    (base_tables.load replaces the catalog's placeholder views of the base tables by those tables.)"""
    con = in_memory_catalog()
    base_tables.load(con, Path(lake), scope, held=held, only=_tables_read(views))
    return con


@cache
def _tables_read(views: frozenset[str]) -> frozenset[str]:
    """The base tables these views read (a derivation leaves the others empty)."""
    from .schema import TABLES

    return frozenset(catalog.reads(views, TABLES) & set(TABLES))


def _serve_derived(con, lake: Path, scope: list[str], evaluated: frozenset[str]) -> list[str]:
    """The materialized views under `evaluated` that this derivation does not compute, read from
    their current partitions where every trace of the scope has one: each a table of those rows in
    place of the view (the same rows: tests/test_derive.py), so that the views under it are not
    evaluated again. A view whose SQL changed (a new tracelake) is then derived from the rows its
    unchanged neighbours already have: `findings` alone over the 98 corpus traces evaluated its
    ~20 rules from the base tables. Returns the views served."""
    from .scoped import derived_sources, view_columns

    candidates = (set(materialize.view_fingerprints()) & catalog.view_reads(evaluated)) - evaluated
    if not candidates:
        return []
    reached = catalog.reads(evaluated, (), stop=candidates) & candidates  # not those under another one
    served = []
    for view, source in derived_sources(lake, scope, reached).items():
        materialize.stand_in(con, view, f"SELECT {typed_select(view_columns()[view])} FROM {source}")
        served.append(view)
    return served


def derive_scope(lake: str, scope: list[str], targets: dict[str, list[str]], threads: int = 1) -> list[str]:
    """Compute and publish the derived partitions of `targets` from a database of `scope`'s tables.
    Each view is evaluated once, replaced by a table of its rows that the views above read, and
    written; `threads` views at a time, each as soon as the views it reads are done (a view takes
    ~15 ms of DuckDB's planning whatever its size, one thread each). Returns warnings (a view that
    fails on a trace is left without partitions, and said; the views above it evaluate it).
    A held trace of the scope (layout.hold) is published with its partitions once all are
    written: readers never see it without them."""
    held = {t: d for t, d in layout.held_traces(Path(lake)).items() if t in set(scope)}
    evaluated = materialize.with_shared(frozenset(v for vs in targets.values() for v in vs))
    con = _scope_database(lake, scope, held, evaluated)
    _serve_derived(con, Path(lake), scope, evaluated)
    fingerprints = materialize.view_fingerprints()
    order = materialize.in_order(evaluated)
    staging = Path(lake) / layout.STAGING / f"derive.{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    warnings: list[str] = []
    held_derived: dict[str, list[tuple[str, str, Path]]] = {t: [] for t in held}  # published with the trace

    def write(view: str, cur) -> None:
        if view in fingerprints:
            for trace_id, staged in _write_partitions(cur, view, [t for t, vs in targets.items() if view in vs],
                                                      staging / view):
                if trace_id in held:
                    held_derived[trace_id].append((view, fingerprints[view], staged))
                else:
                    layout.publish_derived(Path(lake), view, fingerprints[view], trace_id, staged)

    try:
        for view, e in materialize.as_tables(con, order, threads, write):
            warnings.append(f"{view}: not derived for {', '.join(targets)}: {first_line(e) or type(e).__name__}")
        publish_held(Path(lake), held, held_derived)
    finally:
        con.close()
        layout.discard_staging(staging)
    return sorted(warnings)


def publish_held(lake: Path, held: dict[str, Path] | None = None,
                 derived: dict[str, list[tuple[str, str, Path]]] | None = None) -> None:
    """Publish held traces (all the lake holds, without `held`), each with its derived partitions
    in `derived` (trace_id -> (view, fingerprint, written file) each)."""
    for trace_id, folder in sorted((layout.held_traces(lake) if held is None else held).items()):
        layout.publish(lake, trace_id, folder, (derived or {}).get(trace_id, ()))
        layout.discard_staging(folder)


def _write_partitions(con, view: str, trace_ids: list[str], folder: Path) -> list[tuple[str, Path]]:
    """The rows of table <view> for each of `trace_ids` as one Parquet file each (without the trace_id
    column), written by one partitioned COPY; a trace without rows gets an empty file, which marks
    it derived. Returns (trace_id, file) pairs."""
    if not trace_ids:
        return []
    folder.mkdir(parents=True)
    ids = ", ".join(sql_string(t) for t in trace_ids)
    con.execute(f"COPY (SELECT * FROM {view} WHERE trace_id IN ({ids})) TO {sql_string(str(folder / 'rows'))} "
                "(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (trace_id))")
    empty = folder / "empty.parquet"
    out = []
    for t in trace_ids:
        written = layout.copied_partition_files(folder / "rows", t)
        staged = folder / f"{t}.parquet"
        if len(written) == 1:  # out of DuckDB's partition folder, which goes now: 2 system calls here
            os.replace(written[0], staged)  # against ~6 per folder when the staging folder is removed
            os.rmdir(written[0].parent)
        elif not written:
            if not empty.exists():
                con.execute(f"COPY (SELECT * EXCLUDE (trace_id) FROM {view} WHERE false) "
                            f"TO {sql_string(str(empty))} (FORMAT parquet, COMPRESSION zstd)")
            try:  # a link: a third of a run's partitions are empty (one system call, no data copied)
                os.link(empty, staged)
            except OSError:  # a file system without hard links
                shutil.copyfile(empty, staged)
        else:  # DuckDB split a large partition over several files
            con.execute(f"COPY (SELECT * EXCLUDE (trace_id) FROM {view} WHERE trace_id = {sql_string(t)}) "
                        f"TO {sql_string(str(staged))} (FORMAT parquet, COMPRESSION zstd)")
        out.append((t, staged))
    return out


def derive_here(lake: str | Path, tasks: list) -> list[str]:
    """Run derivation tasks (`plan`) in this process; returns their warnings. The batch job spreads
    them over its worker pool or a Dask cluster instead (jobs/derive_job.py)."""
    warnings: list[str] = []
    for scope, targets in tasks:
        warnings.extend(derive_scope(str(Path(lake).resolve()), scope, targets, cores.threads()))
    if tasks:
        drop_stale(lake)
    return warnings


def drop_stale(lake: str | Path) -> None:
    """Remove the partitions of views whose SQL changed (their fingerprint is no longer current)."""
    layout.remove_derived_except(Path(lake).resolve(), {f"{v}@{fp}" for v, fp in materialize.view_fingerprints().items()})
