"""Ingesting files into a lake: discover, read, write atomically, rebuild the database once."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..ingest.discover import discover
from ..ingest.errors import ErrorKind, TraceError
from ..ingest.identity import file_sha256
from ..ingest.printable import path_text
from ..ingest.process_pool import lending
from ..ingest.reading import Limits, is_regular
from ..lake import derive, format_version, materialize
from ..lake.database import update_database
from ..lake.error_line import error_line
from ..lake.layout import is_lake, lake_index, prepare_for_writing
from ..lake.lock import writes_lake
from ..lake.schema import CALLCTX_TABLES, CRITPATH_TABLES
from ..lake.version import __version__
from ..lake.writer import TraceWriter, conform
from . import fs_errors
from .derive_job import ensure_derived
from .worker_pool import process_pool


@dataclass
class FileOutcome:
    path: str
    status: str  # 'ok', 'error', or 'skipped' (no trace, found in a folder)
    trace_id: str | None = None
    events: int = 0
    seconds: float = 0.0
    error: str | None = None
    error_kind: ErrorKind | None = None  # with status 'error' or 'skipped': what kind of failure (ingest/errors.py)
    warnings: tuple[str, ...] = ()
    truncated: bool = False  # with status 'ok': the file was cut short, its rows are those before the cut


def _calling_context(result) -> dict:
    """The calling-context tables; a failure there costs the trace its calling context, not its data."""
    from ..analysis import callctx_build  # numpy and the analysis: only when built

    try:
        return callctx_build.build(result.tables)
    except Exception as e:  # noqa: BLE001 - reported as a warning on the trace
        result.warnings.append(f"calling context not built: {error_line(e)}")
        return {}


def _critical_path(result) -> dict:
    """The critical-path tables; a failure there costs the trace its critical path, not its data."""
    from ..analysis import critpath_build

    try:
        tables, warnings = critpath_build.build(result.tables)
    except Exception as e:  # noqa: BLE001 - reported as a warning on the trace
        result.warnings.append(f"critical path not built: {error_line(e)}")
        return {}
    result.warnings.extend(warnings)
    return tables


def _analysis_builds(needed: set[str] | None) -> list[Callable]:
    """The builders (calling context, critical path) of which `needed` asks for tables (all without it)."""
    return [build for build, tables in ((_calling_context, CALLCTX_TABLES), (_critical_path, CRITPATH_TABLES))
            if needed is None or needed & set(tables)]


def _analysis_tables(result, needed: set[str] | None):
    """The calling-context and critical-path tables of a read trace, those `needed` asks for (all
    without it), built side by side (polars and numpy release the GIL: 0.91 s -> 0.78 s for the two
    on the 89 MB trace); yields each one's tables as it is done, in that order."""
    builds = _analysis_builds(needed)
    with ThreadPoolExecutor(len(builds) or 1) as pool:
        for built in [pool.submit(build, result) for build in builds]:
            yield built.result()


def _each_file(paths: list[str], one: Callable[[str], FileOutcome],
               on_outcome: Callable[[FileOutcome], None]) -> list[FileOutcome]:
    """one(path) for every trace file found under `paths`; a file found in a folder that is no trace
    is skipped, one named on the command line must be a trace."""
    outcomes, named = [], set(paths)
    for path in discover(paths):
        outcome = one(path)
        if path not in named:
            skip_if_no_trace(outcome)
        on_outcome(outcome)
        outcomes.append(outcome)
    return outcomes


def _truncated(result) -> bool:
    return bool(result.tables["traces"].column("is_truncated")[0].as_py())


def _outcome(path: str, make: Callable[[], tuple[int, str, list[str], bool]]) -> FileOutcome:
    """Run make() -> (events, trace_id, warnings, truncated) for one file; any failure becomes the outcome's
    one-line error, so that a bad file never stops the batch."""
    t0 = time.perf_counter()
    shown = path_text(path)
    try:
        events, trace_id, warnings, truncated = make()
    except TraceError as e:
        return FileOutcome(shown, "error", seconds=time.perf_counter() - t0, error=str(e), error_kind=e.kind)
    except OSError as e:
        return FileOutcome(shown, "error", seconds=time.perf_counter() - t0,
                           error=f"{shown}: cannot write lake: {fs_errors.describe(e)}", error_kind=ErrorKind.INTERNAL)
    except Exception as e:  # noqa: BLE001 - a bug on one file must not stop the batch; say which file
        return FileOutcome(shown, "error", seconds=time.perf_counter() - t0,
                           error=f"{shown}: internal error while writing the trace: {error_line(e, 300)}",
                           error_kind=ErrorKind.INTERNAL)
    return FileOutcome(shown, "ok", trace_id, events, time.perf_counter() - t0, warnings=tuple(warnings),
                       truncated=truncated)


def ingest_one(path: str, lake: Path, limits: Limits | None = None, needed: set[str] | None = None,
               hold: bool = False) -> FileOutcome:
    """One file into the lake. The outcome's path is the file name as UTF-8 text (path_text).
    `needed`: the only tables anyone will read (catalog.reads); the calling context and the
    critical path are then built only if some of their tables are among them (default: all).
    `hold`: the trace is held, not published, until its derived tables are written (the
    derivation that follows publishes it: lake/derive.py)."""

    def make():
        from ..ingest.dispatch import ingest_file  # the readers (polars): only when a file is read, not on a re-run

        with lending(process_pool):  # a big file is decoded on this process's share of the cores
            result = ingest_file(path, limits)
        # the base tables are written while the calling context and the critical path are built
        with TraceWriter(lake, result.trace_id, tracelake_version=__version__) as writer:
            writer.write(result.tables)
            for built in _analysis_tables(result, needed):
                writer.write(built)
            writer.hold() if hold else writer.publish()
        return result.event_count, result.trace_id, result.warnings, _truncated(result)

    return _outcome(path, make)


@dataclass
class InMemory:
    """Trace files read into memory (`read_in_memory`): the outcomes; per trace read, its base
    tables among those needed; the calling-context and critical-path tables among those needed
    (`later`), and per trace the futures that build them (each gives a dict of tables), still
    running when the reading returns."""
    outcomes: list[FileOutcome]
    tables: dict[str, dict[str, pa.Table]]
    later: set[str]
    analyses: dict[str, list[Future]]

    def analysis_tables(self) -> dict[str, dict[str, pa.Table]]:
        """Per trace, its tables of `later`, once built."""
        return {trace_id: {name: conform(name, t) for f in futures for name, t in f.result().items()
                           if name in self.later}
                for trace_id, futures in self.analyses.items()}


def read_in_memory(paths: list[str], needed: set[str], analyses: Executor, limits: Limits | None = None,
                   on_outcome: Callable[[FileOutcome], None] = lambda o: None) -> InMemory:
    """The trace files found under `paths`, read into tables held in memory rather than a lake
    (`tracelake stats` of files: nothing is written, the views are evaluated on these rows).
    Only the tables among `needed` are kept; the others are not built at all (an Nsight export's
    are not even read; a PyTorch trace's events are all decoded, their rows of other tables not
    made), unless the calling context or the critical path, which read most of them, are needed.
    Those two are built in `analyses` (an executor: two threads build them side by side) while
    the next file is read and the caller loads the base tables: InMemory.analysis_tables waits."""
    tables, building = {}, {}
    builds = _analysis_builds(needed)
    read = None if builds else needed

    def one(path: str) -> FileOutcome:
        def make():
            from ..ingest.dispatch import ingest_file

            with lending(process_pool):
                result = ingest_file(path, limits, read)
            tables[result.trace_id] = {name: conform(name, t) for name, t in result.tables.items() if name in needed}
            building[result.trace_id] = [analyses.submit(build, result) for build in builds]
            # an analysis that fails adds its warning to result.warnings, after this outcome is made
            return result.event_count, result.trace_id, result.warnings, _truncated(result)

        return _outcome(path, make)

    later = needed & {*CALLCTX_TABLES, *CRITPATH_TABLES}
    return InMemory(_each_file(paths, one, on_outcome), tables, later, building)


def skip_if_no_trace(outcome: FileOutcome) -> FileOutcome:
    """A file that is no trace at all (a results .json beside the traces) is listed as skipped,
    not counted as a failure: `outcome` with status 'skipped' instead of 'error'."""
    if outcome.status == "error" and outcome.error_kind == ErrorKind.NOT_A_TRACE:
        outcome.status = "skipped"
    return outcome


@writes_lake(lambda a: a["lake"])  # one writer at a time (lake/lock.py)
def ingest_paths(paths: list[str], lake: str | Path,
                 on_outcome: Callable[[FileOutcome], None] = lambda o: None,
                 limits: Limits | None = None, needed: set[str] | None = None) -> list[FileOutcome]:
    """Ingest the trace files found under `paths` into `lake`, then derive the new traces'
    materialized views the lake keeps (materialize.kept_views) and update the lake's
    database. With `needed` (the only tables and views
    anyone will read: a throwaway lake whose views are evaluated directly, `tracelake stats`) the
    lake gets no derived tables and no database, and tables outside `needed` may be left out."""
    lake = prepare_for_writing(Path(lake))
    hold = needed is None and bool(materialize.kept_views(lake))  # a trace comes with its derived tables
    outcomes = _each_file(paths, lambda path: ingest_one(path, lake, limits, needed, hold), on_outcome)
    if needed is not None:
        return outcomes
    # the kept views of the new traces and of their runs' other ranks (lake/derive.py)
    ensure_derived(lake, fresh={o.trace_id for o in outcomes if o.status == "ok"}, held=hold)
    derive.publish_held(lake)
    update_database(lake)
    return outcomes


def held_unchanged(path: str, known: dict[str, tuple[str, str]], outdated: dict[str, list[str]]) -> str | None:
    """The trace id under which the lake holds this file unchanged: the same path (known: its
    lake_index) and content, written in this version's format (outdated: format_version.outdated);
    None otherwise: the file is ingested again, which reports what became of it."""
    previous = known.get(path_text(os.path.abspath(path)))
    if previous is None or previous[1] in outdated:
        return None
    try:
        return previous[1] if is_regular(path) and file_sha256(path) == previous[0] else None
    except TraceError:
        return None


def ingest_changed(paths: list[str], lake: str | Path,
                   on_outcome: Callable[[FileOutcome], None] = lambda o: None,
                   limits: Limits | None = None) -> list[FileOutcome]:
    """The trace files found under `paths` in `lake` (`tracelake stats --lake`): a file the lake
    already holds unchanged (same path and content, in this version's lake format) is taken
    from it as it is, the others are ingested. A lake that holds them all is not written to, so a
    read-only one answers too. Outcomes in the order the files were found."""
    lake = Path(lake)
    known = lake_index(lake) if is_lake(lake) else {}
    outdated = format_version.outdated(lake) if known else {}
    found = discover(paths)
    kept = {path: FileOutcome(path_text(path), "ok", trace_id) for path in found
            if (trace_id := held_unchanged(path, known, outdated))}
    todo = [p for p in found if p not in kept]
    ingested = iter(ingest_paths(todo, lake, on_outcome, limits) if todo else [])
    return [kept[p] if p in kept else next(ingested) for p in found]
