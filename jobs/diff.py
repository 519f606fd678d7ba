"""`tracelake diff BASE NEW`: what changed between two traces or runs, why, and is it real
(docs/diff.md). Each side is a trace file, a folder of rank files (a run), or with a lake a
trace id (or unique prefix) or a run id of rank_runs.

The result is one dict (the `--format json` object): base, new, step_time_ns {base, new,
change_ns, change_pct} (medians of the steady steps), steps (per side: count, median, p90, IQR,
mean), noise (diff_noise.verdict), causes (diff_causes), explained_ns (their sum) and
unexplained_ns (the change of the mean step time that no cause holds).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ..analysis import diff_causes, diff_noise

VIEWS = ("steady_steps", "steady_gpu_work", "steady_collectives", "steady_idle", "steady_syncs", "memory_peaks")
PAGE_VIEWS = ("steady_summary",)  # what the page reads beyond the diff (reports/diff_sections views())


class DiffInputError(ValueError):
    """A side that cannot be diffed; the message is one line naming the file or id."""


def diff(base: str | Path, new: str | Path, lake: str | Path | None = None, *, summaries: bool = False,
         noise_floor_pct: float = diff_noise.FLOOR_PCT) -> dict:
    """Compare `base` with `new` (files, folders, or ids in `lake`); raises DiffInputError.
    summaries: also each side's steady_summary rows (result['summary'], for the HTML page);
    noise_floor_pct: a step-time change under this % of the base's is run-to-run noise (diff_noise)."""
    from ..lake import catalog, materialize
    from ..lake.database import connect
    from ..lake.schema import TABLES

    needed = catalog.reads(VIEWS + (PAGE_VIEWS if summaries else ()), TABLES)
    with tempfile.TemporaryDirectory(prefix="tracelake-diff-") as scratch:
        where = Path(lake) if lake else Path(scratch) / "lake"
        for arg in (base, new):  # before ingesting anything
            if not lake and not os.path.exists(arg):
                raise DiffInputError(f"{arg}: no such file or folder")
        if lake:  # the materialized views the diff reads, derived first where the lake does not keep them
            _derive(where, needed)
        known = _lake_ids(where) if lake else {}
        sides = [_side(str(arg), where, known, None if lake else needed) for arg in (base, new)]
        con = connect(where) if lake else _database(where, sides, needed)
        # a throwaway lake's views, evaluated once for both sides (a lake serves them derived)
        evaluated = () if lake else dict.fromkeys(materialize.in_order(needed) + list(VIEWS))
        try:
            with materialize.ready(con, evaluated):
                return compare(con, *sides, str(base), str(new), summaries=summaries, noise_floor_pct=noise_floor_pct)
        finally:
            con.close()


def compare(con, base_ids: list[str], new_ids: list[str], base_label: str, new_label: str, *,
            summaries: bool = False, noise_floor_pct: float = diff_noise.FLOOR_PCT) -> dict:
    """The diff of two sides' traces on a connection whose views hold them (a lake's, or a
    throwaway one's); raises DiffInputError when a side has no steps."""
    figures = [diff_causes.side_figures(con, ids) for ids in (base_ids, new_ids)]
    for label, f in zip((base_label, new_label), figures):
        if not f["walls"]:
            raise DiffInputError(f"{label}: no steps found (no ProfilerStep/step ranges and no periodic GPU work)")
    out = result(base_label, new_label, *figures, noise_floor_pct=noise_floor_pct)
    if summaries:
        out["summary"] = {side: steady_summaries(con, ids) for side, ids in (("base", base_ids), ("new", new_ids))}
    return out


def steady_summaries(con, trace_ids: list[str]) -> list[dict]:
    """The side's steady_summary rows (a row per process), with the trace's file name."""
    cur = con.execute(f"""SELECT t.file_name, s.* FROM steady_summary s JOIN traces t USING (trace_id)
                          WHERE s.trace_id IN {diff_causes.trace_list(trace_ids)}
                          ORDER BY s.rank NULLS FIRST, t.file_name, s.pid""")
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def result(base_label: str, new_label: str, base: dict, new: dict, *,
           noise_floor_pct: float = diff_noise.FLOOR_PCT) -> dict:
    """The diff object of two sides' figures (diff_causes.side_figures)."""
    sb, sn = diff_noise.step_stats(base["walls"]), diff_noise.step_stats(new["walls"])
    change = sn.median_ns - sb.median_ns
    causes = diff_causes.causes(base, new)
    explained = sum(c["change_ns"] for c in causes)
    return {
        "base": base_label, "new": new_label,
        "step_time_ns": {"base": round(sb.median_ns), "new": round(sn.median_ns), "change_ns": round(change),
                         "change_pct": round(100 * change / sb.median_ns, 2) if sb.median_ns else None},
        "steps": {"base": sb.as_dict(), "new": sn.as_dict()},
        "noise": diff_noise.verdict(base["step_samples"], new["step_samples"], noise_floor_pct),
        "causes": causes,
        "explained_ns": explained,
        "unexplained_ns": round(sn.mean_ns - sb.mean_ns - explained),
    }


def _side(arg: str, lake: Path, known: dict[str, list[str]], needed: set[str] | None) -> list[str]:
    """The trace ids of one side: its files ingested into `lake`, or the lake's ids it names."""
    if os.path.exists(arg):
        from ..ingest.discover import discover
        from .ingest_job import ingest_paths

        if not discover([arg]):
            raise DiffInputError(f"{arg}: no trace files in this folder")
        outcomes = ingest_paths([arg], lake, needed=needed)
        bad = next((o for o in outcomes if o.status == "error"), None)
        if bad:
            raise DiffInputError(bad.error)
        ids = sorted({o.trace_id for o in outcomes if o.status == "ok"})
        if not ids:
            raise DiffInputError(f"{arg}: no trace files in this folder")
        return ids
    if arg in known:
        return known[arg]
    matches = sorted({i for key, ids in known.items() if key.startswith(arg) for i in ids})
    if len(matches) == 1:
        return matches
    runs = _run_ids(lake)
    if arg in runs:
        return runs[arg]
    raise DiffInputError(f"{arg}: no such file, and it names {len(matches)} traces of the lake {lake} "
                         f"(a trace id, a unique prefix of one, or a run id)")


def _lake_ids(lake: Path) -> dict[str, list[str]]:
    """A lake's trace ids -> themselves (from its folders: no database opened)."""
    from ..lake import layout

    if not layout.is_lake(lake):
        raise DiffInputError(f"{lake}: not a tracelake lake (no traces/ folder)")
    return {t: [t] for t in layout.complete_trace_ids(lake)}


def _run_ids(lake: Path) -> dict[str, list[str]]:
    """The lake's runs of several traces (rank_runs) -> their trace ids."""
    from ..lake.database import connect

    con = connect(lake)
    try:
        return dict(con.execute("SELECT run_id, list_sort(list(DISTINCT trace_id)) FROM rank_runs "
                                "GROUP BY run_id HAVING count(DISTINCT trace_id) > 1").fetchall())
    finally:
        con.close()


def _derive(lake: Path, needed: set[str]) -> None:
    """The materialized views the diff reads, derived where the lake does not keep them yet (a lake
    `tracelake ingest` wrote, of a few traces), as a query does: over the base tables each side's
    figures evaluate every view under them (2 x 15 s of CPU for the two 190 KB recorded traces of
    tests/test_diff_page.py)."""
    from .derive_job import ensure_derived

    ensure_derived(lake, needed, jobs=os.cpu_count() or 1)


def _database(lake: Path, sides: list[list[str]], needed: set[str]):
    """A throwaway lake's traces (only the tables the diff reads, no partitions derived) in memory."""
    from ..lake.scoped import connect_scoped

    return connect_scoped(lake, sorted({t for ids in sides for t in ids}), needed)
