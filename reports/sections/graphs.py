"""CUDA graph replays (graph_replays) and the phases of the GPU work (graph_phase_totals: replay,
capture, warm-up, eager): only for traces that capture or replay graphs."""

from __future__ import annotations

from ..page import Page

NAME = "graphs"
TITLE = "CUDA graphs"
VIEWS = ("graph_replays", "graph_phase_totals")


def build(page: Page) -> dict | None:
    replays = page.sql("""SELECT pid, graph_id, replays, kernels_per_replay, gpu_ns_per_replay, span_ns_per_replay,
                                 launch_ns, total_gpu_ns, capture_site
                          FROM graph_replays WHERE trace_id = $trace
                          ORDER BY total_gpu_ns DESC, pid, graph_id LIMIT 20""").to_dicts()
    phases = page.sql("""SELECT phase, ops, gpu_ns FROM graph_phase_totals WHERE trace_id = $trace
                         ORDER BY gpu_ns DESC, phase""").to_dicts()
    return {"replays": replays, "phases": phases} if replays or phases else None
