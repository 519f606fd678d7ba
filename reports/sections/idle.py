"""Why the GPU waits: idle stream time by cause (idle_cause_summary), GPU idle in gaps over 10 µs
by gap length and cause (gpu_gap_histogram), and the largest gaps with what the host was doing
(largest_gpu_gaps). Whole trace: start-up gaps are here too, and the 'at' column says where (with
the page's Perfetto export, page.export, each gap links to it: 'at' is its time there too)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "idle"
TITLE = "Why the GPU waits"
VIEWS = ("idle_cause_summary", "gpu_gap_histogram", "gap_length_bins", "largest_gpu_gaps", "steady_state")
LARGEST = 10


def causes(page: Page) -> list[dict]:
    return page.sql("""SELECT cause, gaps, idle_ns FROM idle_cause_summary WHERE trace_id = $trace
                       ORDER BY idle_ns DESC, cause""").to_dicts()


def gap_labels(con) -> list[str]:
    """The gap length bins' labels, shortest first (gap_length_bins)."""
    return con.sql("SELECT bin FROM gap_length_bins ORDER BY bin_index").pl()["bin"].to_list()


def histogram(page: Page) -> pl.DataFrame:
    """bin, cause, gaps, idle_ms: GPU idle time in gaps longer than 10 µs, one bar segment per row."""
    return page.sql("""SELECT bin, cause, gaps, idle_ns / 1e6 AS idle_ms FROM gpu_gap_histogram
                       WHERE trace_id = $trace ORDER BY bin_index, cause""")


def histogram_figure(page: Page) -> Figure | None:
    frame = histogram(page)
    if frame.is_empty():
        return None
    return Figure("idle_gaps", "Idle gaps by length", charts.gap_distribution(frame, gap_labels(page.con)), frame,
                  [Column("bin", "gap length"), Column("cause", "cause"), Column("gaps", "gaps", "count"),
                   Column("idle_ms", "GPU idle time", "ms")])


def largest(page: Page, limit: int = LARGEST) -> list[dict]:
    """The longest gaps; at_ns: gap start - the trace's start; phase: start-up (before the first
    steady step of its process) or steady."""
    return page.sql(f"""
        SELECT g.pid, g.device_id, g.start_ns - $origin AS at_ns, g.duration_ns, g.next_op, g.launch_api,
               g.launch_delay_ns, g.cause, g.host_activity,
               CASE WHEN s.start_ns IS NULL THEN NULL WHEN g.end_ns <= s.start_ns THEN 'start-up'
                    WHEN g.start_ns >= s.end_ns THEN 'after steps' ELSE 'steady' END AS phase
        FROM largest_gpu_gaps g LEFT JOIN steady_state s ON s.trace_id = g.trace_id AND s.pid = g.pid AND s.steps > 0
        WHERE g.trace_id = $trace AND g.size_rank <= {limit}
        ORDER BY g.duration_ns DESC, g.size_rank""", {"origin": page.origin_ns}).to_dicts()


def build(page: Page) -> dict | None:
    rows, fig, gaps = causes(page), histogram_figure(page), largest(page)
    if not (rows or fig or gaps):
        return None
    return {"causes": rows, "figure": fig, "gaps": gaps, "export": page.export}
