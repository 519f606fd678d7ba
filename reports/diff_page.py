"""What a diff page shows (`tracelake diff --format html`, and the index's run-to-run diffs): the
diff object of jobs/diff.py (with its sides' steady_summary rows) turned into the page's
headline, the causes' chart and table, and the two sides' steady states side by side. Numbers are
formatted by the template with the theme's formats; every string is autoescaped."""

from __future__ import annotations

import polars as pl

from . import charts
from .figure import Column, Figure

CHART_CAUSES = 15  # bars in the chart (the table lists all causes, up to TABLE_CAUSES)
TABLE_CAUSES = 100
SIDE_PROCESSES = 3  # processes of a side shown in the steady-state table
# The steady-state rows: (label, steady_summary column, format)
STEADY_ROWS = (("steady steps", "steps", "count"), ("warm-up steps", "warmup_steps", "count"),
               ("median step", "median_step_ns", "ms"), ("p90 step", "p90_step_ns", "ms"),
               ("GPU idle in a step", "gpu_idle_pct", "pct"), ("main idle cause", "main_idle_cause", "text"),
               ("its share of the idle time", "main_idle_cause_pct", "pct"), ("MFU", "mfu_pct", "pct"),
               ("bound by", "bound_by", "text"), ("its share of the critical path", "bound_by_pct", "pct"))


def causes_figure(causes: list[dict]) -> Figure | None:
    """The bar chart of the causes that took step time (the largest CHART_CAUSES), with its table."""
    timed = [c for c in causes if c["change_ns"]][:CHART_CAUSES]
    if not timed:
        return None
    frame = pl.DataFrame({"order": list(range(1, len(timed) + 1)), "kind": [c["kind"] for c in timed],
                          "name": [c["name"] for c in timed], "change_ms": [c["change_ns"] / 1e6 for c in timed]},
                         schema={"order": pl.Int64, "kind": pl.String, "name": pl.String, "change_ms": pl.Float64})
    note = None if len(timed) == len([c for c in causes if c["change_ns"]]) else \
        f"The {len(timed)} largest causes; the table below lists them all."
    return Figure("diff_causes", "change of the step time by cause", charts.diff_causes(frame), frame,
                  [Column("order", "#", "count"), Column("kind", "kind"), Column("name", "name"),
                   Column("change_ms", "change per step", "ms")], note)


def steady_columns(summary: dict) -> tuple[list[dict], int]:
    """The steady-state table's columns: up to SIDE_PROCESSES processes of each side, and how many
    processes were left out."""
    cols, left = [], 0
    for side in ("base", "new"):
        rows = summary.get(side, [])
        for r in rows[:SIDE_PROCESSES]:
            who = f"rank {r['rank']}" if r["rank"] is not None else (f"pid {r['pid']}" if len(rows) > 1 else "")
            cols.append({"side": side, "who": who, "file_name": r["file_name"], "row": r})
        left += max(0, len(rows) - SIDE_PROCESSES)
    return cols, left


def page_data(result: dict) -> dict:
    """The template's values; each cause with its evidence in a few words (evidence_text)."""
    causes = [dict(c, evidence_text=evidence_text(c["evidence"])) for c in result["causes"]]
    st, steps, noise = result["step_time_ns"], result["steps"], result["noise"]
    verdict = "within noise" if noise["within_noise"] else ("slower" if st["change_ns"] > 0 else "faster")
    columns, left_out = steady_columns(result.get("summary") or {})
    return {"r": result, "st": st, "steps": steps, "noise": noise, "verdict": verdict,
            "mean_change_ns": steps["new"]["mean_ns"] - steps["base"]["mean_ns"],
            "causes": causes[:TABLE_CAUSES], "more_causes": max(0, len(causes) - TABLE_CAUSES),
            "causes_chart": causes_figure(result["causes"]), "steady_columns": columns, "steady_left_out": left_out,
            "steady_rows": STEADY_ROWS, "side_processes": SIDE_PROCESSES}


def evidence_text(ev: dict) -> str:
    """The evidence in a few words, beyond the per-step times the table shows."""
    parts = []
    for key, value in ev.items():
        if key in ("base_ns_per_step", "new_ns_per_step"):
            continue
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) for v in value):
            parts.append(f"{key.replace('_per_step', '/step')} {_num(value[0])}->{_num(value[1])}")
        elif isinstance(value, dict):
            parts.append(", ".join(f"{k} {_num(v[0])}->{_num(v[1])}/step" for k, v in value.items()))
        elif isinstance(value, list):
            parts.append("; ".join(map(str, value)))
        else:
            parts.append(str(value))
    return "; ".join(parts)


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:g}"
