"""Writing report files: per-trace pages and an index page linking them (atomically, temp + rename)."""

from __future__ import annotations

import os
from pathlib import Path

from tracelake.analysis.lake import connect_scoped

from .render import index_report, trace_report


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_reports(con, out_dir: Path, trace_ids: list[str] | None = None, failures: list[dict] | None = None,
                  render_ids: set[str] | None = None, index: Path | None = None) -> Path:
    """out_dir/traces/<trace_id>.html for each trace (only those in render_ids, all when None, are
    rendered again) and an index page linking them: `index`, by default out_dir/index.html.
    Returns the index path."""
    all_ids = [r[0] for r in con.execute("SELECT trace_id FROM traces ORDER BY file_name").fetchall()]
    ids = [t for t in all_ids if trace_ids is None or t in trace_ids]
    links = {t: out_dir / "traces" / f"{t}.html" for t in ids}
    siblings = {t: f"{t}.html" for t in ids}  # trace pages link each other (per-rank section)
    todo = [t for t in ids if render_ids is None or t in render_ids or not links[t].exists()]
    for scope, members in trace_scopes(con, todo).items():
        scoped = connect_scoped(lake_path(con), list(scope))
        try:
            for trace_id in members:
                write_atomically(links[trace_id], trace_report(scoped, trace_id, siblings))
        finally:
            scoped.close()
    index = index or out_dir / "index.html"
    relative = {t: Path(os.path.relpath(p, index.parent)).as_posix() for t, p in links.items()}
    write_atomically(index, index_report(con, relative, failures or []))
    return index


def lake_path(con) -> Path:
    return Path(con.sql("SELECT lake_path FROM _lake_info").fetchall()[0][0])


def trace_scopes(con, trace_ids: list[str]) -> dict[tuple[str, ...], list[str]]:
    """The traces each page needs (its run's rank files, else itself) -> the pages that need them.
    A page is rendered from a database of just those traces (connect_scoped)."""
    runs: dict[str, set[str]] = {}
    for trace_id, run_id in con.execute("SELECT DISTINCT trace_id, run_id FROM rank_runs").fetchall():
        runs.setdefault(run_id, set()).add(trace_id)
    run_of = {t: tuple(sorted(members)) for members in runs.values() for t in members}
    scopes: dict[tuple[str, ...], list[str]] = {}
    for t in trace_ids:
        scopes.setdefault(run_of.get(t, (t,)), []).append(t)
    return scopes
