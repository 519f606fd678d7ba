"""Rendering reports: one self-contained HTML page per trace, and an index page for a lake.

Charts are PNG images rendered offline and inlined as data: URIs; CSS is inline; there is no
JavaScript and nothing is loaded from the network. Every string from a trace goes through
Jinja's HTML autoescaping.
"""

from __future__ import annotations

import base64

import jinja2
from tracelake.analysis import __version__

from . import charts, data, theme

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tracelake.reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
)
_ENV.globals.update(ms=theme.ms, pct=theme.pct, count=theme.count, gbps=theme.gbps, mb=theme.mb, short=theme.short,
                    version=__version__)


def _png_uri(chart) -> str:
    return "data:image/png;base64," + base64.b64encode(charts.to_png(chart)).decode()


def trace_report(con, trace_id: str) -> str:
    h = data.header(con, trace_id)
    chart_specs = []
    util = data.utilization(con, trace_id)
    if util.height:
        chart_specs.append(("GPU utilization over time", "Share of each 1/100 of the GPU's active range in which it "
                            "ran kernels, copies or memsets.", charts.utilization_over_time(util)))
    breakdown = data.breakdown(con, trace_id)
    if breakdown.height:
        chart_specs.append(("Where the GPU time goes", "Compute: any compute kernel running; non-compute: only "
                            "communication, copies or memsets; idle: nothing.", charts.time_breakdown(breakdown)))
    kernels = data.kernel_table(con, trace_id)
    if kernels:
        import polars as pl

        top = pl.DataFrame(kernels[:12]).select("name", (pl.col("total_ns") / 1e6).alias("total_ms"))
        chart_specs.append(("Top kernels", None, charts.top_kernels(top)))
    tree = data.icicle(con, trace_id)
    if tree.height:
        chart_specs.append(("Which code launched the GPU time", "Calling context, top down: each bar's width is "
                            "its share of all GPU time (Python frames > operators > kernels).", charts.icicle(tree)))
    rendered = [{"title": t, "note": n, "src": _png_uri(c)} for t, n, c in chart_specs]
    return _ENV.get_template("trace.html.j2").render(
        title=f"tracelake: {h['file_name']}", h=h, k=data.headline(con, trace_id), charts=rendered,
        findings=data.findings_table(con, trace_id), kernels=kernels, memcpy=data.memcpy_table(con, trace_id),
        idle=data.idle_causes(con, trace_id), steps=data.steps_table(con, trace_id), api=data.api_table(con, trace_id),
        nvtx=data.nvtx_table(con, trace_id))


def index_report(con, links: dict[str, str], failures: list[dict], title: str = "tracelake: traces") -> str:
    rows = data.index_rows(con)
    for r in rows:
        r["link"] = links.get(r["trace_id"])
    return _ENV.get_template("index.html.j2").render(title=title, rows=rows, failures=failures)
