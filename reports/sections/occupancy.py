"""Occupancy of the kernels with the most GPU time (kernel_occupancy_summary): how many blocks
and warps of each fit on an SM, Kineto's estimate of the achieved share, and what limits it."""

from __future__ import annotations

from ..page import Page

NAME = "occupancy"
TITLE = "Kernel occupancy"
VIEWS = ("kernel_occupancy_summary",)
LIMIT = 12


def build(page: Page) -> dict | None:
    rows = page.sql(f"""SELECT name, threads_per_block, registers_per_thread, shared_memory_bytes, launches, total_ns,
                               time_pct, active_blocks_per_sm, theoretical_occupancy_pct, estimated_occupancy_pct,
                               limiter
                        FROM kernel_occupancy_summary WHERE trace_id = $trace
                        ORDER BY total_ns DESC, name, threads_per_block, registers_per_thread, shared_memory_bytes
                        LIMIT {LIMIT}""").to_dicts()
    return {"rows": rows} if rows else None
