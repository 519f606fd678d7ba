"""The report's charts as functions of a lake connection and a trace: each returns an Altair chart
(the timeline: a TimelineChart, drawn straight to SVG; reports/timeline_svg.py) or None when the
trace has no data for it, the same chart the page's section draws. In a notebook
they render inline (`tracelake.charts`, docs/python.md); `figure(con, trace_id, name)` returns the
page's Figure (the chart and the table of the rows it draws).

`con` is any connection with tracelake's views: tracelake.open(lake), or a scoped database.
"""

from __future__ import annotations

import altair as alt

from . import data
from . import sections as _s
from .figure import Figure
from .page import Page
from .timeline_svg import TimelineChart


def _built(section, key: str = "figure"):
    def build(page: Page):
        built = section.build(page)
        return None if built is None else built.get(key)
    return build


# Every figure of a trace page, by name: how to build it from the page (None: no data for it).
FIGURES = {
    "utilization": _s.utilization.figure,
    "time_breakdown": _built(_s.time_breakdown),
    "top_kernels": lambda page: _s.top_kernels.figure(_s.top_kernels.table(page)),
    "memcpy": _built(_s.memcpy),
    "idle_gaps": _s.idle.histogram_figure,
    "step_time": _s.steps.figure,
    "timeline": _s.timeline.figure,
    "critical_path": lambda page: _s.critical_path.figure(page, _s.critical_path.steps(page)),
    "collective_bandwidth": lambda page: _s.collectives.figure(_s.collectives.rows(page)),
    "calling_context": _s.calling_context.figure,
    "memory": lambda page: _s.memory.figure(page.con, page.trace_id),
    "roofline": lambda page: _s.operators.roofline_figure(page.con, page.trace_id),
    "gpu_metrics": _s.gpu_metrics.figure,
    "fusion": _built(_s.fusion),
}


def figure(con, trace_id: str, name: str) -> Figure | None:
    """The page's figure `name` (utilization, time_breakdown, top_kernels, memcpy, idle_gaps,
    step_time, critical_path, collective_bandwidth, calling_context, memory, roofline, gpu_metrics,
    fusion)."""
    return FIGURES[name](Page.open(con, trace_id))


def _chart(con, trace_id: str, name: str) -> alt.TopLevelMixin | TimelineChart | None:
    fig = figure(con, trace_id, name)
    return None if fig is None else fig.chart


_DOCS = {
    "utilization": "GPU in use (%) over the steady state (the whole active range without steps), per device.",
    "time_breakdown": "Compute / busy without compute / idle, steady state and whole trace, per rank or process.",
    "top_kernels": "The 12 kernels with the most total time, one bar each.",
    "memcpy": "Copy and memset time by direction and memory kind, labelled with the achieved bandwidth.",
    "idle_gaps": "GPU idle time in gaps over 10 µs, by gap length and cause.",
    "step_time": "Each steady step of the first process: compute, GPU busy without compute, GPU idle (ms).",
    "critical_path": "Each steady step's critical path split by class.",
    "timeline": "The median steady step on a timeline: CPU threads, GPU streams, idle gaps, the critical path "
                "(a TimelineChart: SVG, .to_svg()).",
    "collective_bandwidth": "Bus bandwidth of the collectives of the trace's run by message size.",
    "calling_context": "Icicle of the calling context: Python frames > operators > kernels.",
    "memory": "GPU memory allocated and reserved over the trace, with the step starts.",
    "roofline": "The operators on the GPU's roofline (log-log).",
    "gpu_metrics": "Nsight's GPU hardware metrics (% of peak) through the first steady step, in 50 slices.",
    "fusion": "The chains of memory-bound kernels with the most GPU time fusion would save per step.",
}


def _public(name: str):
    def chart(con, trace_id: str) -> alt.TopLevelMixin | TimelineChart | None:
        return _chart(con, trace_id, name)

    chart.__name__ = chart.__qualname__ = name
    chart.__doc__ = _DOCS[name]
    return chart


globals().update({name: _public(name) for name in _DOCS})


def run_history(con) -> alt.Chart | None:
    """Median step time and GPU idle of every run, by the trace's own start time, one line per
    workload (runs of the same program: run_comparison's pairing)."""
    from .charts import run_history as chart

    frame = data.run_history(con)
    return chart(frame) if frame.height else None
