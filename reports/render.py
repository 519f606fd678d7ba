"""Rendering reports: one self-contained HTML page per trace, and an index page for a lake.

A trace page is the ordered list of sections in reports/sections (each: its views, its data, its
template); charts are Figures, SVG images rendered offline and inlined as data: URIs, each with the
table of the rows it draws. CSS is inline; there is no JavaScript and nothing is loaded from the
network. Every string from a trace goes through Jinja's HTML autoescaping. `version` (the footer's)
is the calling program's, passed as a value.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2
from altair.utils.schemapi import debug_mode

from . import charts, data, theme
from .diff_page import DiffPage
from .diff_sections import DIFF_SECTIONS
from .figure import Column, Figure
from .page import Page
from .sections import SECTIONS, parallelism, ranks

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tracelake.reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
)
_ENV.filters["raw"] = theme.raw
_ENV.globals.update(ms=theme.ms, pct=theme.pct, count=theme.count, gbps=theme.gbps, size=theme.size, gib=theme.gib,
                    short=theme.short, when=theme.when, seconds=theme.seconds)


@dataclass
class TracePage:
    html: str
    index_row: dict  # the trace's row on the index page (the columns of data.index_rows)


def trace_report(con, trace_id: str, links: dict[str, str] | None = None, *, version: str,
                 whatif: list[dict] | None = None, export: str | None = None) -> str:
    return trace_page(con, trace_id, links, version=version, whatif=whatif, export=export).html


def built_sections(page, sections=SECTIONS, folder: str = "sections") -> list[dict]:
    """The sections the page has data for, in page order: name, title, template (the section's
    TEMPLATE, else <folder>/<NAME>.html.j2), data. A trace page's by default; the diff page's are
    diff_sections.DIFF_SECTIONS."""
    out = []
    for section in sections:
        # Altair checks every chart object against the Vega-Lite schema as it is made (its debug
        # mode): 2.2 s of the 37 corpus pages' 67 s; the specs are fixed code, which
        # tests/test_reports.py validates whole
        with debug_mode(False):
            built = section.build(page)
        if built is not None:
            template = getattr(section, "TEMPLATE", f"{folder}/{section.NAME}.html.j2")
            out.append({"name": section.NAME, "title": section.TITLE, "template": template, "data": built})
    return out


def trace_page(con, trace_id: str, links: dict[str, str] | None = None, *, version: str,
               whatif: list[dict] | None = None, export: str | None = None) -> TracePage:
    """links: trace id -> relative link of its page, for the per-rank section. whatif: the critical
    path's what-if rows (analysis.critpath_whatif.report_rows), when the caller computed them.
    export: relative link of the trace's Perfetto export (analysis.trace_export), when written:
    the findings and the largest gaps then say where each is in it."""
    page = Page.open(con, trace_id, links, whatif, export)
    summary = page.summary
    trace = dict(page.trace, devices=summary["gpu_names"])  # the page's header line
    sections = built_sections(page)
    html = _ENV.get_template("trace.html.j2").render(title=f"tracelake: {trace['file_name']}", trace=trace,
                                                     sections=sections, version=version)
    run_ranks: list = next((s["data"]["ranks"] for s in sections if s["name"] == ranks.NAME), [])
    run_groups: list = next((s["data"]["groups"] for s in sections if s["name"] == parallelism.NAME), [])
    return TracePage(html, data.index_row(summary, data.run_ranks_of(trace_id, run_ranks), run_groups))


def history_figure(con) -> Figure | None:
    """Median step time and GPU idle of every run by its start, a line per workload."""
    frame = data.run_history(con)
    if frame.is_empty():
        return None
    return Figure("run_history", "step time and GPU idle across runs", charts.run_history(frame), frame,
                  [Column("workload", "workload"), Column("run", "run"), Column("started", "started (UTC)"),
                   Column("step_ms", "median step", "ms"), Column("idle_pct", "GPU idle", "pct")])


def index_report(con, links: dict[str, str], failures: list[dict], rows: list[dict], *, version: str,
                 title: str = "tracelake: traces", diffs: dict[str, dict] | None = None) -> str:
    """The page a team lead reads first: a row per run (its rank files grouped under it) with GPU
    busy/idle, step time and findings; step time and idle across runs of each workload; the runs
    that got slower or faster; the inputs that failed. rows: a row per trace (data.INDEX_COLUMNS).
    diffs: run id -> {'link': the relative link of its diff page against the previous run of its
    workload, 'verdict': that diff's verdict (analysis/diff_noise.verdict)}. A run compared by step
    time got slower or faster when its diff's verdict says so; one compared by kernel time (no
    steps: no noise test) when the change is data.CHANGE_PCT or more."""
    rows = sorted(rows, key=lambda r: r["file_name"])
    for r in rows:
        r["link"] = links.get(r["trace_id"])
    comparisons = data.run_comparisons(con)  # (data.INDEX_VIEWS: evaluated once by the caller)
    runs = data.run_rows(con, rows)
    for run in runs:
        diff = (diffs or {}).get(run["run_id"]) or {}
        run["diff_link"], run["verdict"] = diff.get("link"), diff.get("verdict") or data.kernel_verdict(run)
    history = history_figure(con)
    return _ENV.get_template("index.html.j2").render(
        title=title, rows=rows, runs=runs, failures=failures, comparisons=comparisons, links=links, version=version,
        slower=[r for r in runs if r["verdict"] == "slower"], faster=[r for r in runs if r["verdict"] == "faster"],
        undecided=[r for r in runs if (r["verdict"] or "").startswith("inconclusive")], history=history,
        change_pct=data.CHANGE_PCT)


def diff_report(result: dict, *, version: str, title: str | None = None) -> str:
    """A diff page (`tracelake diff --format html`, the index's run-to-run diffs): `result` is
    jobs/diff.py's object (with 'summary', the sides' steady_summary rows, when asked for); its
    sections are reports/diff_sections, in the trace page's style."""
    title = title or f"tracelake diff: {result['base']} vs {result['new']}"
    return _ENV.get_template("diff.html.j2").render(title=title, version=version, r=result,
                                                    sections=built_sections(DiffPage(result), DIFF_SECTIONS,
                                                                             "diff_sections"))
