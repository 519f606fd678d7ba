"""Rendering reports: one self-contained HTML page per trace, and an index page for a lake.

Charts are SVG images rendered offline and inlined as data: URIs; CSS is inline; there is no
JavaScript and nothing is loaded from the network. Every string from a trace goes through
Jinja's HTML autoescaping. `version` (the footer's) is the calling program's, passed as a value.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import jinja2
import polars as pl

from . import charts, data, memory, operators, theme

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("tracelake.reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
)
_ENV.globals.update(ms=theme.ms, pct=theme.pct, count=theme.count, gbps=theme.gbps, mb=theme.mb, gib=theme.gib,
                    short=theme.short)


def _svg_uri(chart) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(charts.to_svg(chart).encode()).decode()


@dataclass
class TracePage:
    html: str
    index_row: dict  # the trace's row on the index page (the columns of data.index_rows)


def trace_report(con, trace_id: str, links: dict[str, str] | None = None, *, version: str,
                 whatif: list[dict] | None = None) -> str:
    return trace_page(con, trace_id, links, version=version, whatif=whatif).html


def trace_page(con, trace_id: str, links: dict[str, str] | None = None, *, version: str,
               whatif: list[dict] | None = None) -> TracePage:
    """links: trace id -> relative link of its page, for the per-rank section. whatif: the critical
    path's what-if rows (analysis.critpath_whatif.report_rows), when the caller computed them."""
    summary = data.summary(con, trace_id)
    h = data.header(con, trace_id, summary)
    chart_specs = []
    util = data.utilization(con, trace_id)
    if util.height:
        chart_specs.append(("GPU utilization over time", "Share of each 1/100 of the GPU's active range in which it "
                            "ran kernels, copies or memsets.", charts.utilization_over_time(util)))
    temporal = data.temporal(con, trace_id)
    breakdown = data.breakdown(temporal)
    if breakdown.height:
        chart_specs.append(("Where the GPU time goes", "Compute: any compute kernel running; non-compute: only "
                            "communication, copies or memsets; idle: nothing.", charts.time_breakdown(breakdown)))
    kernels = data.kernel_table(con, trace_id)
    if kernels:
        top = pl.DataFrame(kernels[:12]).select("name", (pl.col("total_ns") / 1e6).alias("total_ms"))
        chart_specs.append(("Top kernels", None, charts.top_kernels(top)))
    copies = data.memcpy_chart(con, trace_id)
    if copies.height:
        chart_specs.append(("Memory copies and memsets", "Time by direction and memory kind; the label is the "
                            "achieved bandwidth (bytes / time).", charts.memcpy_kinds(copies)))
    gaps = data.gap_distribution(con, trace_id)
    if gaps.height:
        chart_specs.append(("Idle gaps by length", "GPU idle time in gaps longer than 10 µs. host_wait: the next "
                            "operation was launched only after the GPU had gone idle; kernel_wait: it was "
                            "queued, gap under 30 µs; other: it was queued but waited on something else.",
                            charts.gap_distribution(gaps, data.GAP_LABELS)))
    step_parts = data.step_breakdown(con, trace_id)
    if step_parts.height:
        chart_specs.append(("Step time", "Each step of the first process split into time with compute kernels "
                            "running, GPU busy without compute (communication, copies) and GPU idle.",
                            charts.step_breakdown(step_parts)))
    critical = data.critical_path_steps(con, trace_id)
    critical_bars = data.critical_path_chart(critical)
    if critical_bars.height:
        chart_specs.append(("Critical path per step", "The longest chain of dependent work through each step "
                            "(operators, launches, kernels, waits): what the step cannot be shorter than, by what "
                            "bounds it. `tracelake whatif` re-runs it with a class shortened.",
                            charts.critical_path(critical_bars)))
    bandwidth = data.collective_bandwidth_rows(con, trace_id)
    sized = bandwidth.filter(pl.col("bytes").is_not_null() & pl.col("busbw_gb_per_s").is_not_null())
    if sized.height:
        chart_specs.append(("Collective bandwidth by message size", "Bus bandwidth (nccl-tests' busbw: algbw x "
                            "the operation's factor) at the median transfer time of each operation, size and type"
                            + ("; not all ranks of the run are in the lake, so waiting counts as transfer and the "
                               "bandwidths are lower bounds" if sized["is_bound"].any() else "") + ".",
                            charts.collective_bandwidth(sized)))
    tree = data.icicle(con, trace_id)
    if tree.height:
        chart_specs.append(("Which code launched the GPU time", "Calling context, top down: each bar's width is "
                            "its share of all GPU time (Python frames > operators > kernels).", charts.icicle(tree)))
    findings = data.findings_table(con, trace_id)
    memory_section = memory.section(con, trace_id)
    if memory_section and memory_section["chart"] is not None:
        memory_section["chart"] = _svg_uri(memory_section["chart"])
    rendered = [{"title": t, "note": n, "src": _svg_uri(c)} for t, n, c in chart_specs]
    points, roof_rows = operators.roofline_points(con, trace_id), operators.roofs(con, trace_id)
    roofline = _svg_uri(operators.roofline_chart(points, roof_rows)) if points.height and roof_rows.height else None
    k = data.headline(summary, kernels)
    ranks = data.rank_rows(con, trace_id)
    html = _ENV.get_template("trace.html.j2").render(
        title=f"tracelake: {h['file_name']}", h=h, k=k, charts=rendered, findings=findings, kernels=kernels,
        memcpy=data.memcpy_table(con, trace_id),
        idle=data.idle_causes(con, trace_id), gaps=data.largest_gaps(con, trace_id),
        steps=data.steps_table(con, trace_id), steady=data.steady_state(con, trace_id),
        graphs=data.graph_replays_table(con, trace_id), phases=data.gpu_phases(con, trace_id),
        api=data.api_table(con, trace_id), nvtx=data.nvtx_table(con, trace_id),
        ranks=ranks, collectives=bandwidth.to_dicts(), links=links or {}, version=version,
        critical=critical.to_dicts(), critical_ops=data.critical_path_ops(con, trace_id) if critical.height else [],
        whatif=whatif or [], memory=memory_section,
        ops=operators.operator_rows(con, trace_id), op_head=operators.headline(con, trace_id),
        mfu_steps=operators.mfu_rows(con, trace_id), roofline=roofline)
    return TracePage(html, data.index_row(summary, data.run_ranks_of(trace_id, ranks)))


def index_report(con, links: dict[str, str], failures: list[dict], rows: list[dict], *, version: str,
                 title: str = "tracelake: traces") -> str:
    """rows: a row per trace (data.INDEX_COLUMNS)."""
    rows = sorted(rows, key=lambda r: r["file_name"])
    for r in rows:
        r["link"] = links.get(r["trace_id"])
    with data.frozen(con, ["runs", "run_kernel_time"]):  # each is read by several comparison views
        comparisons = data.run_comparisons(con)
    return _ENV.get_template("index.html.j2").render(title=title, rows=rows, failures=failures,
                                                     comparisons=comparisons, links=links, version=version)
