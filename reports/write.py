"""Writing report files: per-trace pages and an index page linking them (atomically, temp + rename)."""

from __future__ import annotations

import os
from pathlib import Path

from .render import index_report, trace_report


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_reports(con, out_dir: Path, trace_ids: list[str] | None = None, failures: list[dict] | None = None,
                  render_ids: set[str] | None = None) -> Path:
    """index.html in out_dir and traces/<trace_id>.html for each trace; only those in render_ids
    (all when None) are rendered again. Returns the index path."""
    all_ids = [r[0] for r in con.execute("SELECT trace_id FROM traces ORDER BY file_name").fetchall()]
    ids = [t for t in all_ids if trace_ids is None or t in trace_ids]
    links = {}
    for trace_id in ids:
        page = out_dir / "traces" / f"{trace_id}.html"
        if render_ids is None or trace_id in render_ids or not page.exists():
            _write(page, trace_report(con, trace_id))
        links[trace_id] = f"traces/{trace_id}.html"
    index = out_dir / "index.html"
    _write(index, index_report(con, links, failures or []))
    return index
