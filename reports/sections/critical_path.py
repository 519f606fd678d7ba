"""Critical path per step (critical_path_summary of the page's process): the chart for the steady
steps, the table for every step with its phase, what is on the path (critical_path_first_ops), and
what-if rows (analysis.critpath_whatif, computed by the report job)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "critical_path"
TITLE = "Critical path"
VIEWS = ("critical_path_first_steps", "critical_path_first_ops", "step_phases")
CLASSES = ("cpu", "data_loading", "launch_overhead", "kernel_to_kernel", "sync_wait", "memcpy", "communication",
           "gpu_compute")
LIMIT = 40


def steps(page: Page, limit: int = LIMIT) -> pl.DataFrame:
    """The page's process's steps with their critical path; phase 'warm-up' / 'steady'."""
    return page.sql(f"""
        SELECT c.*, p.phase
        FROM critical_path_first_steps c
        LEFT JOIN step_phases p USING (trace_id, pid, step_index)
        WHERE c.trace_id = $trace ORDER BY c.step_index LIMIT {limit}""")


def chart_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """step_index, step, class, ms: the steady steps (all steps when none is steady), a bar segment
    per class with time on the path."""
    if rows.is_empty():
        return pl.DataFrame()
    steady = rows.filter(pl.col("phase") == "steady")
    rows = steady if steady.height else rows
    wide = rows.select("step_index", "step", *[(pl.col(f"{c}_ns") / 1e6).alias(c) for c in CLASSES])
    return wide.unpivot(index=["step_index", "step"], variable_name="class", value_name="ms").filter(
        pl.col("ms") > 0).sort("step_index", pl.col("class").replace_strict(list(CLASSES), list(range(len(CLASSES)))))


def figure(page: Page, rows: pl.DataFrame) -> Figure | None:
    frame = chart_rows(rows)
    if frame.is_empty():
        return None
    label = page.steady_label if rows.filter(pl.col("phase") == "steady").height else "every step"
    return Figure("critical_path", f"Critical path per step, {label}", charts.critical_path(frame), frame,
                  [Column("step_index", "step #", "count"), Column("step", "step"), Column("class", "class"),
                   Column("ms", "time on the path", "ms")])


def ops(page: Page, limit: int = 12) -> list[dict]:
    """What puts the most time on the critical paths of the first process, over all its steps."""
    return page.sql(f"""SELECT event_kind, name, class, path_ns, edges, pct FROM critical_path_first_ops
                        WHERE trace_id = $trace ORDER BY path_ns DESC, name LIMIT {limit}""").to_dicts()


def build(page: Page) -> dict | None:
    rows = steps(page)
    if rows.is_empty():
        return None
    return {"figure": figure(page, rows), "rows": rows.to_dicts(), "ops": ops(page), "whatif": page.whatif}
