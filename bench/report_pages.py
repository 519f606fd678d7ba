"""Report pages (issue #28): what a page costs to render and how big it is, as users run it.

- `tracelake report --lake LAKE -o OUT` for the lake that `tracelake ingest` makes of the bundled
  samples (4 pages and the index), a fresh process on a fresh copy of that lake each time (the
  first report of such a lake derives it: docs/lake.md), median of 3 after a warm-up; the pages'
  bytes (HTML with the charts inlined).
- With TRACELAKE_BEFORE=/path/to/bin/tracelake (an install of an earlier commit; its name in the
  results: TRACELAKE_BEFORE_LABEL), the same
  command of that version on its own copy of the lake, paired in one run (A B A B ...): before and
  after side by side with their ratio, and the earlier pages' bytes.
- In process: each section's share of a page's render time, the ResNet-50 sample page (the
  largest), built 3 times (best of 3 per section, charts rendered to SVG), with the shared views
  evaluated once beforehand as the report job does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO, load_average, paired

TRACELAKE = [str(Path(sys.executable).with_name("tracelake"))]


def _lake(tmp: Path, tracelake: list[str], name: str) -> Path:
    lake = tmp / name / "lake"
    done = subprocess.run(tracelake + ["ingest", str(REPO / "tests" / "data"), "--lake", str(lake), "--quiet"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-500:])
    return lake


def _fresh_copies(lake: Path, tracelake: list[str], out: Path):
    """The report command as a function of the run's number (bench.common.paired): each run on its
    own copy of `lake`, made before the run's clock starts."""
    def command(n: int) -> list[str]:
        copy = lake.parent / f"run{n}" / "lake"
        shutil.rmtree(copy.parent, ignore_errors=True)
        shutil.copytree(lake, copy, symlinks=True)
        return tracelake + ["report", "--lake", str(copy), "-o", str(out)]
    return command


def _pages_bytes(index: Path) -> tuple[int, int]:
    pages = list((index.parent / f"{index.stem}_files" / "traces").glob("*.html"))
    return len(pages), sum(p.stat().st_size for p in pages)


def _section_shares(lake: Path) -> list[tuple[str, float]]:
    from tracelake.jobs.report_views import shared_views
    from tracelake.lake import materialize
    from tracelake.lake.database import connect
    from tracelake.lake.scoped import ScopedDatabase

    whole = connect(lake)
    trace_id = whole.execute("SELECT trace_id FROM traces ORDER BY event_count DESC LIMIT 1").fetchone()[0]
    whole.close()
    db = ScopedDatabase(lake)
    try:
        con = db.load([trace_id])
        best: dict[str, float] = {}
        with materialize.ready(con, shared_views()):  # as the report job renders a page: shared views evaluated once
            _time_sections(con, trace_id, best)
    finally:
        db.close()
    total = sum(best.values())
    return [(name, s / total) for name, s in sorted(best.items(), key=lambda kv: -kv[1])]


def _time_sections(con, trace_id: str, best: dict[str, float]) -> None:
    from tracelake.reports.figure import Figure
    from tracelake.reports.page import Page
    from tracelake.reports.sections import SECTIONS

    for _ in range(3):
        page = Page.open(con, trace_id)
        for section in SECTIONS:
            t0 = time.perf_counter()
            built = section.build(page)
            for value in (built or {}).values():
                if isinstance(value, Figure):
                    value.src  # noqa: B018 - renders the chart, as the page does
            seconds = time.perf_counter() - t0
            best[section.NAME] = min(best.get(section.NAME, seconds), seconds)


def run() -> list[tuple[str, str]]:
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    before = os.environ.get("TRACELAKE_BEFORE")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        lake = _lake(tmp, TRACELAKE, "after")
        out_a = tmp / "after" / "pages" / "index.html"
        report = _fresh_copies(lake, TRACELAKE, out_a)
        if before:
            lake_b = _lake(tmp, [before], "before")
            out_b = tmp / "before" / "pages" / "index.html"
            t_b, t_a, ratio = paired(_fresh_copies(lake_b, [before], out_b), report)
            n_b, bytes_b = _pages_bytes(out_b)
        else:
            t_a, _, _ = paired(report, report)
        n_a, bytes_a = _pages_bytes(out_a)
        rows.append((f"`tracelake report` of the {n_a} bundled samples + index, lake as `ingest` wrote it "
                     "(process, median of 3)", f"{t_a:.2f} s"))
        rows.append(("  pages' bytes (HTML, charts inlined)", f"{bytes_a / 1e6:.2f} MB"))
        if before:
            label = os.environ.get("TRACELAKE_BEFORE_LABEL", before)
            rows.append((f"  the same with {label} (earlier version, paired)", f"{t_b:.2f} s; {bytes_b / 1e6:.2f} MB "
                         f"for {n_b} pages"))
            rows.append(("  now / earlier (time)", f"{ratio:.2f}"))
        shutil.rmtree(tmp / "after" / "pages", ignore_errors=True)
        shares = _section_shares(lake)
    rows.append(("sections' shares of the largest sample page's render time (in process, best of 3)",
                 ", ".join(f"{name} {share:.0%}" for name, share in shares if share >= 0.01)))
    return rows


if __name__ == "__main__":
    for label, value in run():
        print(f"{label}: {value}")
