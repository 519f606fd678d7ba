"""tracelake's Python API, for notebooks and scripts (docs/python.md).

    import tracelake
    tracelake.ingest(["traces/"], lake="lake/")            # or tracelake.run(["traces/"], out="out/")
    lake = tracelake.open("lake/")                         # a read-only DuckDB connection, every view
    lake.sql("SELECT * FROM kernel_summary").pl()           # .df() for pandas, .to_arrow_table() for Arrow
    tracelake.charts.top_kernels(lake, "rank0")            # an Altair chart, shown inline
    tracelake.export("lake/", "rank0-...", "rank0.perfetto.json.gz")  # open it in ui.perfetto.dev

The public names are the ones in __all__; everything in the subpackages (tracelake.lake, .ingest,
.analysis, .jobs, .cli, .serve, .reports, .sql) is internal and may change. This module imports nothing heavy: the worker
processes that import tracelake.ingest load it too.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    import duckdb
    from tracelake.jobs.ingest_job import FileOutcome
    from tracelake.jobs.run_job import RunSummary

__all__ = ["open", "ingest", "run", "export", "diff", "set_peak", "charts", "__version__"]


def open(lake: str | Path) -> duckdb.DuckDBPyConnection:  # noqa: A001 - tracelake.open is the API's name
    """A read-only DuckDB connection to the lake at `lake`, with every tracelake table and view.

    Query it as DuckDB: ``lake.sql("SELECT ...").pl()`` (polars), ``.df()`` (pandas), ``.to_arrow_table()``.
    A lake that keeps no derived tables yet (one `ingest` wrote, of a few traces) derives them
    first, as ``tracelake report`` and ``tracelake sql`` do, when it can be written and no other
    process writes it: over the base tables every query evaluates all the views under it (the
    example notebook's queries on the 4 bundled samples). The lake's database is rebuilt first when
    it is missing, was moved, or predates this version of tracelake's SQL. Raises
    FileNotFoundError when `lake` is not a lake. Close it when done (or use it in a ``with``
    block) so that a later ingest can write the database.
    """
    import warnings

    from tracelake.jobs.derive_job import ensure_derived
    from tracelake.lake.database import connect

    # in this process: a process pool would start the caller's script again in each worker
    # (spawn), and a script without an `if __name__ == "__main__":` guard would open the lake there
    for warning in ensure_derived(lake, None):
        warnings.warn(warning, stacklevel=2)
    return connect(lake, read_only=True)


def set_peak(peak: str | float | None) -> None:
    """Declare the peak MFU is counted against, for the connections opened after the call (and the
    worker processes of a later ``run``): the precision the model intends (``"bf16"``, ``"fp32"``,
    ...) or a rate in TFLOP/s; None goes back to the trace's own (the precision holding most of
    its modelled FLOPs). The CLI's ``--peak``. ValueError for anything else."""
    from tracelake.lake import declared_peak

    declared_peak.declare(None if peak is None else str(peak))


def _ingest(paths: str | Path | Iterable[str | Path], lake: str | Path,
            on_file: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
    """Ingest trace files (or directories, searched recursively) into `lake`, one by one.

    Returns one FileOutcome per file, as the CLI prints them: ``path``, ``status`` ('ok' or
    'error'), ``trace_id``, ``events``, ``seconds``, ``error`` (the one-line reason) and
    ``warnings``. A file that fails does not stop the others. `on_file` is called after each file.
    """
    from tracelake.jobs.ingest_job import ingest_paths

    return ingest_paths(_paths(paths), lake, on_file or (lambda o: None))


class _CallableIngest(types.ModuleType):
    """The subpackage tracelake.ingest, callable as the API's tracelake.ingest(paths, lake=...).

    Python binds a subpackage to its parent's attribute of the same name whenever it is imported,
    so a plain function `tracelake.ingest` would be replaced by the ingest/ package as soon as
    anything imported tracelake.ingest.<module> (the jobs all do). The package object itself is
    made callable instead: `tracelake.ingest(...)` and `tracelake.ingest.<module>` both work.
    """

    def __call__(self, paths: str | Path | Iterable[str | Path], lake: str | Path,
                 on_file: Callable[[FileOutcome], None] | None = None) -> list[FileOutcome]:
        return _ingest(paths, lake, on_file)

    __call__.__doc__ = _ingest.__doc__


import tracelake.ingest as _ingest_package  # noqa: E402 - bound to tracelake.ingest here, made callable

_ingest_package.__class__ = _CallableIngest
ingest = _ingest_package


def run(dirs: str | Path | Iterable[str | Path], out: str | Path, *, jobs: int | None = None,
        prune: bool = False, reports: bool = True, executor: str = "local",
        scheduler: str | None = None, export: bool = False) -> RunSummary:
    """The batch job of ``tracelake run``: every trace under `dirs` into ``out/lake`` (in parallel,
    skipping unchanged files), then the HTML reports under ``out/reports`` unless reports=False.

    Returns the RunSummary: ``lake`` (its path), ``seconds`` (the whole run, reports included),
    and ``files``, a dict per file (path, status 'ok' / 'unchanged' / 'removed' / 'skipped' /
    'error', trace_id, events, seconds, error, warnings), the rows of ``tracelake run --json``. executor='dask' runs the
    ingest and the report pages on the Dask cluster at `scheduler` (docs/run.md).
    export=True writes each page's Perfetto export beside it (``reports/traces/<trace_id>.trace.json.gz``)
    and links the page's findings and largest GPU gaps to it, as ``tracelake run --export``
    (docs/export.md).
    """
    from tracelake.jobs.run_with_reports import run_with_reports

    summary, _ = run_with_reports(_paths(dirs), out, jobs=jobs, prune=prune, reports=reports, export=export,
                                  executor=executor, scheduler=scheduler)
    return summary


def export(lake: str | Path, trace_id: str | None, out: str | Path, *, format: str = "perfetto",  # noqa: A002
           run: str | None = None) -> int:
    """Write trace `trace_id` of the lake at `lake` to `out` as ``tracelake export`` does: Chrome
    trace-event JSON (gzip-compressed when `out` ends in .gz) that Perfetto's UI and chrome://tracing
    open, with the trace's events and tracelake's steps, critical path, GPU idle gaps by cause and
    findings (docs/export.md). With `run` (a run id, a unique part of one, or a trace id of one of
    its ranks) and trace_id None: every rank of that distributed run in one file, each collective
    instance's ranks linked by a flow (``tracelake export --run``). Returns the number of events
    written; raises ValueError when `run` names no single run."""
    if format != "perfetto":
        raise ValueError(f"format {format!r}: only 'perfetto' (Chrome trace-event JSON) is written")
    from tracelake.jobs import export_scope
    from tracelake.jobs.derive_job import ensure_derived
    from tracelake.jobs.run_export import resolve_run, run_traces, write_run
    from tracelake.jobs.trace_export import write
    from tracelake.lake.database import connect

    ensure_derived(lake)  # what the lake keeps and lacks (a view whose SQL changed)
    run_id = None
    if run is not None:
        con = connect(lake, read_only=True)
        try:
            run_id, why = resolve_run(con, run)
            if run_id is None:
                raise ValueError(why)
            trace_ids = [t for t, _, _ in run_traces(con, run_id)]
        finally:
            con.close()
    with export_scope.of_lake(lake, [trace_id] if run_id is None else trace_ids) as con:
        return write(con, trace_id, out) if run_id is None else write_run(con, run_id, out)[0]


def diff(base: str | Path, new: str | Path, lake: str | Path | None = None) -> dict:
    """What changed between two traces or runs and why: the object of ``tracelake diff --format json``
    (docs/diff.md). `base` and `new` are trace files, folders of rank files, or with `lake` trace ids
    (or unique prefixes) or run ids of that lake. Keys: ``base``, ``new``, ``step_time_ns`` (``base``,
    ``new``, ``change_ns``, ``change_pct``: medians of the steady steps), ``steps``, ``noise``,
    ``causes`` (``kind``, ``name``, ``change_ns`` per steady step, ``evidence``; largest first),
    ``explained_ns``, ``unexplained_ns``. ``polars.DataFrame(result["causes"])`` makes the causes a
    frame. Raises ValueError (one line naming the file) on bad input.
    """
    from tracelake.jobs.diff import diff as compare

    return compare(base, new, lake)


def _paths(paths: str | Path | Iterable[str | Path]) -> list[str]:
    return [str(paths)] if isinstance(paths, str | Path) else [str(p) for p in paths]


def __getattr__(name: str) -> Any:
    # loaded on first use: charts pull in Altair, the version reads package metadata
    if name == "charts":
        from tracelake.reports import trace_charts

        return trace_charts
    if name == "__version__":
        from tracelake.lake.version import __version__

        return __version__
    raise AttributeError(f"module 'tracelake' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
