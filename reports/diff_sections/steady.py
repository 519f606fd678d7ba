"""The two sides' steady states side by side (steady_summary: steps, median and p90 step, GPU idle
and its main cause, MFU, what bounds the step), up to SIDE_PROCESSES processes per side."""

from __future__ import annotations

from ..diff_page import DiffPage

NAME = "steady"
TITLE = "The two sides' steady state"
VIEWS = ("steady_summary",)
SIDE_PROCESSES = 3
# (label, steady_summary column, format)
ROWS = (("steady steps", "steps", "count"), ("warm-up steps", "warmup_steps", "count"),
        ("median step", "median_step_ns", "ms"), ("p90 step", "p90_step_ns", "ms"),
        ("GPU idle in a step", "gpu_idle_pct", "pct"), ("main idle cause", "main_idle_cause", "text"),
        ("its share of the idle time", "main_idle_cause_pct", "pct"), ("MFU", "mfu_pct", "pct"),
        ("bound by", "bound_by", "text"),
        ("its share (of the critical path; of the step where the GPU idles)", "bound_by_pct", "pct"))


def build(page: DiffPage) -> dict | None:
    cols, left = [], 0
    for side in ("base", "new"):
        rows = page.summary.get(side, [])
        for r in rows[:SIDE_PROCESSES]:
            who = f"rank {r['rank']}" if r["rank"] is not None else (f"pid {r['pid']}" if len(rows) > 1 else "")
            cols.append({"side": side, "who": who, "file_name": r["file_name"], "row": r})
        left += max(0, len(rows) - SIDE_PROCESSES)
    if not cols:
        return None
    return {"columns": cols, "left_out": left, "rows": ROWS, "side_processes": SIDE_PROCESSES}
