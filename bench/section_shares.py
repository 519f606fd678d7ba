"""Each report section's share of a trace page's render time and bytes, page by page (issue #33:
the timeline section under 10 % of a page's render time).

Ingests the given trace files (default: the bundled samples in tests/data and three corpus PyTorch
traces) into a temporary lake, then renders each page as the report job does (a database of the
trace alone, the shared views evaluated once) and times every section: its build (queries,
frames) and its template (charts rendered to SVG, tables written), best of RUNS (5) per section. A
section's bytes are those of its HTML. Usage:

    .venv/bin/python -m bench.section_shares [--section timeline] [TRACE ...]

or as a case of `python -m bench section_shares` (the default traces; the timeline's share).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO, SHARED, load_average

RUNS = 5
CORPUS = ("torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz",
          "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz",
          "hta_v100_spmd_dhen_rank1_memory_large.json.gz")


def default_traces() -> list[Path]:
    samples = sorted(p for p in (REPO / "tests" / "data").iterdir() if p.name.endswith(".gz"))
    corpus = [SHARED / "traces" / "pytorch" / name for name in CORPUS]
    return samples + [p for p in corpus if p.exists()]


def _ingest(traces: list[Path], lake: Path) -> None:
    tracelake = str(Path(sys.executable).with_name("tracelake"))
    for trace in traces:
        done = subprocess.run([tracelake, "ingest", str(trace), "--lake", str(lake), "--quiet"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{trace.name}: {done.stderr.strip()[-500:]}")


def page_sections(con, trace_id: str) -> dict[str, tuple[float, int]]:
    """section name -> (best seconds of build + template render, bytes of its HTML)."""
    from tracelake.reports.page import Page
    from tracelake.reports.render import _ENV
    from tracelake.reports.sections import SECTIONS

    best: dict[str, tuple[float, int]] = {}
    for _ in range(RUNS):
        page = Page.open(con, trace_id)
        h = dict(page.trace, devices=page.summary["gpu_names"])
        for section in SECTIONS:
            t0 = time.perf_counter()
            built = section.build(page)
            html = "" if built is None else _ENV.get_template(f"sections/{section.NAME}.html.j2").render(s=built, h=h)
            seconds = time.perf_counter() - t0
            if section.NAME not in best or seconds < best[section.NAME][0]:
                best[section.NAME] = (seconds, len(html.encode()))
    return best


def measure(lake: Path) -> list[tuple[str, dict[str, tuple[float, int]]]]:
    from tracelake.jobs.report_views import shared_views
    from tracelake.lake import materialize
    from tracelake.lake.database import connect
    from tracelake.lake.scoped import ScopedDatabase

    whole = connect(lake)
    traces = whole.execute("SELECT trace_id, file_name FROM traces ORDER BY event_count").fetchall()
    whole.close()
    out = []
    db = ScopedDatabase(lake)
    try:
        for trace_id, file_name in traces:
            con = db.load([trace_id])
            with materialize.ready(con, shared_views()):
                out.append((file_name, page_sections(con, trace_id)))
    finally:
        db.close()
    return out


def run(section: str = "timeline") -> list[tuple[str, str]]:
    """The bench case: per page, the section's share of the sections' time and of the bytes."""
    rows = [("machine load (1, 5, 15-minute load average) at the start", load_average())]
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        _ingest(default_traces(), lake)
        for file_name, sections in measure(lake):
            total_s = sum(s for s, _ in sections.values())
            total_b = sum(b for _, b in sections.values())
            s, b = sections.get(section, (0.0, 0))
            rows.append((f"{section} section of {file_name}: share of the sections' time (best of {RUNS}); bytes",
                         f"{s / total_s:.0%} ({s:.3f} of {total_s:.3f} s); {b / 1e3:,.0f} of {total_b / 1e3:,.0f} kB"))
    return rows


def main(argv: list[str] | None = None) -> None:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("traces", nargs="*", type=Path)
    args.add_argument("--section", default="timeline", help="the section whose share is printed per page")
    opts = args.parse_args(argv)
    print(f"machine load (1, 5, 15 min): {load_average()}")
    with tempfile.TemporaryDirectory() as tmp:
        lake = Path(tmp) / "lake"
        _ingest(opts.traces or default_traces(), lake)
        rows = measure(lake)
    print(f"| page | {opts.section} | all sections | share of time | {opts.section} bytes | page bytes |")
    print("|---|---:|---:|---:|---:|---:|")
    for file_name, sections in rows:
        total_s = sum(s for s, _ in sections.values())
        total_b = sum(b for _, b in sections.values())
        s, b = sections.get(opts.section, (0.0, 0))
        print(f"| {file_name} | {s:.3f} s | {total_s:.3f} s | {s / total_s:.0%} | {b / 1e3:,.0f} kB "
              f"| {total_b / 1e3:,.0f} kB |")
        top = sorted(sections.items(), key=lambda kv: -kv[1][0])[:4]
        print("|  largest: " + ", ".join(f"{n} {v[0] / total_s:.0%}" for n, v in top) + " | | | | | |")


if __name__ == "__main__":
    main()
