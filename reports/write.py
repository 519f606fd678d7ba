"""Writing report files: per-trace pages and an index page linking them (atomically, temp + rename)."""

from __future__ import annotations

import os
from pathlib import Path

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
    links = {}
    for trace_id in ids:
        page = out_dir / "traces" / f"{trace_id}.html"
        if render_ids is None or trace_id in render_ids or not page.exists():
            write_atomically(page, trace_report(con, trace_id))
        links[trace_id] = page
    index = index or out_dir / "index.html"
    relative = {t: Path(os.path.relpath(p, index.parent)).as_posix() for t, p in links.items()}
    write_atomically(index, index_report(con, relative, failures or []))
    return index
