"""The batch job: `tracelake run DIR... --out OUTDIR`: directories of traces -> lake + database.

Each file is an independent task (ingest, build its calling context, write its partitions
atomically) run in a process pool; the derivation step that follows publishes each trace with its
derived tables (lake/derive.py), so that a reader never sees one without the other. The run is
incremental: the lake's own `traces` table says which file (path and content hash) each trace came
from, so an unchanged file is skipped, a changed one is re-ingested and replaces its old trace, and
--prune drops traces whose file is gone. A file whose bytes the lake or the run already holds under
another path is not read: it is an alias of that trace (lake/aliases.py).
Because the lake is the only state, a run killed at any point (even kill -9) leaves nothing that
a re-run does not clean up (layout.prepare_for_writing) or redo.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..ingest.discover import discover
from ..ingest.errors import TraceError
from ..ingest.identity import file_sha256
from ..ingest.printable import path_text
from ..ingest.reading import Limits, is_regular
from ..ingest.sources import cost_per_byte
from ..lake import aliases, compact, cores, derive, format_version
from ..lake.database import update_database
from ..lake.layout import complete_trace_ids, delete_trace, lake_index, loose_trace_ids, note_replaces, prepare_for_writing
from ..lake.lock import writes_lake
from . import derive_job, stage_workers
from .ingest_job import FileOutcome, held_unchanged, ingest_one, skip_if_no_trace
from .worker_pool import process_pool


@dataclass
class RunSummary:
    lake: str
    files: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    # wall seconds of each stage: ingest (reading the files), derive (the materialized views),
    # database (compaction, tracelake.duckdb); run_with_reports.py adds reports
    stage_seconds: dict[str, float] = field(default_factory=dict)
    derive_warnings: list[str] = field(default_factory=list)  # materialized views not derived for a trace

    @property
    def failed(self) -> int:
        return sum(f["status"] == "error" for f in self.files)

    def count(self, status: str) -> int:
        return sum(f["status"] == status for f in self.files)


def _copies_apart(todo: list[str], held: dict[str, tuple[str, str]],
                  outdated: dict[str, list[str]]) -> tuple[list[str], dict[str, tuple[str, str | None, str | None]]]:
    """(the files to read, the copies: path -> (content_sha256, the trace the lake holds of the same
    bytes or None, the file of this run read for them or None)). A file whose bytes equal
    a trace of the lake (current in format) or an earlier file of `todo` is a copy, not read."""
    by_content = {sha: trace_id for sha, trace_id in held.values() if trace_id not in outdated}
    first: dict[str, str] = {}
    read, copies = [], {}
    for path in todo:
        try:
            sha = file_sha256(path) if is_regular(path) else None
        except TraceError:
            sha = None  # (reading it says what is wrong)
        if sha is not None and sha in by_content:
            copies[path] = (sha, by_content[sha], None)
        elif sha is not None and sha in first:
            copies[path] = (sha, None, first[sha])
        else:
            read.append(path)
            if sha is not None:
                first[sha] = path
    return read, copies


def _record_copies(lake: Path, copies: dict, first_read: dict[str, FileOutcome], prune: bool,
                   summary: RunSummary, on_outcome: Callable) -> None:
    """Each copy's outcome: 'alias' of the trace of its bytes (recorded in the lake's aliases), or
    the outcome of the file read for them when that one failed (the same bytes fail the same way).
    An alias whose file was read this run (it changed) is one no more; with `prune`, nor one whose
    file is gone."""
    current = aliases.read(lake, set(complete_trace_ids(lake)))
    for path in list(current):
        if path in first_read or (prune and not os.path.exists(path)):
            del current[path]
    for path, (sha, trace_id, original) in copies.items():
        shown = path_text(path)
        if trace_id is None:
            first = first_read[path_text(original)]
            if first.status != "ok":
                outcome = FileOutcome(shown, first.status, error=(first.error or "").replace(first.path, shown, 1),
                                      error_kind=first.error_kind)
                summary.files.append(asdict(outcome))
                on_outcome(outcome, len(summary.files), len(summary.files))
                continue
            trace_id = first.trace_id
        current[shown] = (sha, trace_id)
        outcome = FileOutcome(shown, "alias", trace_id)
        summary.files.append(asdict(outcome))
        on_outcome(outcome, len(summary.files), len(summary.files))
    aliases.write(lake, current)


def _task(path: str, lake: str, limits: Limits | None) -> FileOutcome:
    return ingest_one(path, Path(lake), limits, hold=True)  # published with its derived tables


# Seconds of ingest per unit of cost: a file's size times its source's relative cost per byte
# (ingest/sources.cost_per_byte; 1.0, a gzip'd PyTorch trace, takes ~0.45 s per MB on 2 cores).
_SECONDS_PER_COST = 0.45e-6
# What a worker costs before its first file (stage_workers): its start and the import of the readers
# and analyses (0.5 s of CPU on the 2-core machine); what a derivation worker costs: its start and
# the planning of every view that each batch repeats (lake/derive.py BATCH).
INGEST_START_S, DERIVE_START_S = 1.0, 1.5


def _cost(path: str) -> float:
    try:
        size = os.path.getsize(path)
    except OSError:
        return 0.0  # (its task says what is wrong with it)
    return size * cost_per_byte(path)


def costliest_first(paths: list[str]) -> list[str]:
    """The files in the order to start them: the costliest first (by size and kind), so that a big
    file is not the last one a worker starts while the others have nothing left to do."""
    return sorted(paths, key=_cost, reverse=True)


def ingest_seconds(paths: list[str]) -> float:
    """About how long reading these files takes on one core."""
    return sum(map(_cost, paths)) * _SECONDS_PER_COST


def _execute(paths: list[str], lake: Path, workers: int, executor: str, scheduler: str | None,
             limits: Limits | None):
    """Run the per-file tasks; yields outcomes as they finish. 'local': a process pool on this
    machine (workers 0: this process); 'dask': a Dask distributed cluster (its workers must see
    the files and the lake)."""
    if not paths:
        return
    if executor != "dask" and workers == 0:
        for p in paths:
            yield _task(p, str(lake), limits)
        return
    paths = costliest_first(paths)
    if executor == "dask":
        from distributed import Client
        from distributed import as_completed as dask_completed

        with Client(scheduler) as client:
            futures = [client.submit(_task, p, str(lake), limits, pure=False) for p in paths]
            for future in dask_completed(futures):
                yield future.result()
        return
    with process_pool(min(workers, len(paths))) as pool:  # fewer files: more cores each (a big one's decode)
        for future in as_completed([pool.submit(_task, p, str(lake), limits) for p in paths]):
            yield future.result()


@writes_lake(lambda a: Path(a["out"]) / "lake")  # one writer at a time (lake/lock.py)
def run(paths: list[str], out: str | Path, jobs: int | None = None, prune: bool = False,
        on_outcome: Callable[[FileOutcome, int, int], None] = lambda o, done, total: None,
        executor: str = "local", scheduler: str | None = None, limits: Limits | None = None,
        on_stage: Callable[[str], None] = lambda text: None) -> RunSummary:
    """Outcomes name files by path_text (file names that are not UTF-8 are escaped), which is
    also how the lake's `traces.path` holds them. on_stage(text) is called as each stage starts
    (ingest, derive) with a line that says what it does."""
    t0 = time.perf_counter()
    workers = jobs or cores.threads()
    lake = prepare_for_writing(Path(out) / "lake")
    held = lake_index(lake)
    known = {**aliases.read(lake, {trace_id for _, trace_id in held.values()}), **held}
    outdated = format_version.outdated(lake)  # written without what this version reads: read again
    files = [os.path.abspath(p) for p in discover(paths)]
    summary = RunSummary(str(lake.resolve()))
    todo = []
    for path in files:
        if trace_id := held_unchanged(path, known, outdated):
            summary.files.append(asdict(FileOutcome(path_text(path), "unchanged", trace_id)))
        else:
            todo.append(path)
    todo, copies = _copies_apart(todo, held, outdated)
    gone_from = set()  # folders that lost a trace: their runs' other ranks are derived again
    if prune:
        present = {path_text(f) for f in files}
        for path, (_, trace_id) in known.items():
            if path not in present and not os.path.exists(path):
                delete_trace(lake, trace_id)
                gone_from.add(os.path.dirname(path))
                summary.files.append(asdict(FileOutcome(path, "removed", trace_id)))
    kept = summary.count("unchanged")
    on_stage(f"ingest: {len(todo)} file{'s' * (len(todo) != 1)} to read" + (f", {kept} unchanged" if kept else ""))
    done = 0
    first_read: dict[str, FileOutcome] = {}
    ingest_workers = workers if executor == "dask" else stage_workers.worth(workers, ingest_seconds(todo), INGEST_START_S)
    for outcome in _execute(todo, lake, ingest_workers, executor, scheduler, limits):
        skip_if_no_trace(outcome)
        if outcome.status == "ok" and outcome.path in held and held[outcome.path][1] != outcome.trace_id:
            note_replaces(lake, outcome.trace_id, held[outcome.path][1])  # the file changed: its old trace
            gone_from.add(os.path.dirname(outcome.path))                  # goes when the new one comes
        done += 1
        on_outcome(outcome, done, len(todo))
        summary.files.append(asdict(outcome))
        first_read[outcome.path] = outcome
    _record_copies(lake, copies, first_read, prune, summary, on_outcome)
    # the materialized views of the new traces and of their runs' other ranks, in the same workers
    fresh = {f["trace_id"] for f in summary.files if f["status"] == "ok"}
    t_derive = time.perf_counter()
    summary.stage_seconds["ingest"] = t_derive - t0
    events = sum(f["events"] or 0 for f in summary.files if f["status"] == "ok")
    derive_workers = (workers if executor == "dask"
                      else max(1, stage_workers.worth(workers, derive.batch_seconds(events), DERIVE_START_S)))

    def planned(tasks: list) -> None:
        if tasks:
            traces = sum(len(targets) for _, targets in tasks)
            on_stage(f"derive: the views of {traces} trace{'s' * (traces != 1)}")

    summary.derive_warnings = derive_job.ensure_derived(lake, None, fresh=fresh, changed_folders=gone_from, held=True,
                                                        jobs=derive_workers, executor=executor, scheduler=scheduler,
                                                        on_tasks=planned)
    derive.publish_held(lake)  # (derivation published them; any it had no view for)
    t_database = time.perf_counter()
    summary.stage_seconds["derive"] = t_database - t_derive
    if len(loose_trace_ids(lake, "traces")) >= compact.AUTO_LOOSE:  # keeps file counts and query times flat
        compact.compact(lake, count=False)
    update_database(lake)
    end = time.perf_counter()
    summary.seconds = end - t0
    summary.stage_seconds["database"] = end - t_database
    return summary
