"""Steps: which rule found them, the steady state's step time split into compute, GPU busy
without compute and GPU idle (step_time_split of the page's process, steady steps only: warm-up
and start-up are named beside it), and every step in a table with its phase."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "steps"
TITLE = "Steps"
VIEWS = ("steps", "steady_state", "step_phases", "step_time_split", "steady_summary")
CHART_STEPS, TABLE_STEPS = 60, 30


def split(page: Page) -> pl.DataFrame:
    """step_index, step, category (compute / non_compute / idle), ms: the steady steps of the page's
    process; the three add up to the step's wall time."""
    s = page.steady
    return page.sql(f"""
        WITH w AS (
            SELECT step_index, step, compute_ns / 1e6 AS compute, non_compute_ns / 1e6 AS non_compute,
                   idle_ns / 1e6 AS idle
            FROM step_time_split JOIN step_phases USING (trace_id, pid, step_index)
            WHERE trace_id = $trace AND pid = $pid AND phase = 'steady'
            ORDER BY step_index LIMIT {CHART_STEPS}
        )
        UNPIVOT w ON compute, non_compute, idle INTO NAME category VALUE ms
        ORDER BY step_index, list_position(['compute', 'non_compute', 'idle'], category)""",
                    {"pid": s["pid"]})


def figure(page: Page) -> Figure | None:
    if page.steady is None:
        return None
    frame = split(page)
    if frame.is_empty():
        return None
    return Figure("step_time", f"Step time, {page.steady_label}", charts.step_breakdown(frame), frame,
                  [Column("step_index", "step #", "count"), Column("step", "step"), Column("category", "category"),
                   Column("ms", "time", "ms")])


def table(page: Page, limit: int = TABLE_STEPS) -> list[dict]:
    """Every step (first `limit` per trace), phase 'warm-up' or 'steady' (step_phases)."""
    return page.sql(f"""
        SELECT st.rank, st.pid, st.step, st.wall_ns, st.host_wall_ns, st.step_time_basis, st.gpu_idle_pct,
               st.compute_ns, st.communication_ns, st.memcpy_ns, st.dataloader_ns, p.phase
        FROM steps st JOIN step_phases p USING (trace_id, pid, step_index)
        WHERE st.trace_id = $trace ORDER BY st.pid, st.step_index LIMIT {limit}""").to_dicts()


def build(page: Page) -> dict | None:
    rows = table(page)
    if not rows:
        return None
    rules = page.sql("""SELECT pid, step_rule, steps, warmup_steps, median_step_ns FROM steady_state
                        WHERE trace_id = $trace ORDER BY pid""").to_dicts()
    return {"figure": figure(page), "rows": rows, "rules": rules, "steady": page.steady, "label": page.steady_label}
