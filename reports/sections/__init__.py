"""The sections of a trace page, in page order. A section is a module with NAME, TITLE, VIEWS (the
views it reads: the report job evaluates them once per task) and build(page) -> dict | None (None:
the trace has nothing for it), and a template templates/sections/<NAME>.html.j2 that shows the
dict as `s`. Charts are Figures: the chart and the table of the rows it draws
(docs/architecture.md: adding a section)."""

from __future__ import annotations

from . import (
    api,
    calling_context,
    collectives,
    critical_path,
    findings,
    fusion,
    gpu_metrics,
    graphs,
    idle,
    memcpy,
    memory,
    nvtx,
    occupancy,
    operators,
    parallelism,
    ranks,
    steps,
    summary,
    time_breakdown,
    timeline,
    top_kernels,
    utilization,
)

SECTIONS = [summary, ranks, findings, utilization, time_breakdown, steps, timeline, critical_path, top_kernels,
            occupancy, gpu_metrics, operators, fusion, memcpy, idle, collectives, parallelism,
            graphs, memory, calling_context, api, nvtx]


def views() -> list[str]:
    """Every view a section reads, each once, in page order."""
    return list(dict.fromkeys(v for section in SECTIONS for v in section.VIEWS))
