"""The step time of both sides (median, p90, mean, spread of the steady steps), its change and the
verdict: slower, faster, within noise or inconclusive (too few steps), with the noise test (analysis/diff_noise.py)."""

from __future__ import annotations

from ..diff_page import DiffPage

NAME = "step_time"
TITLE = "Step time and verdict"
VIEWS = ()
STATS = (("median", "median_ns"), ("p90", "p90_ns"), ("mean", "mean_ns"), ("interquartile range (spread)", "iqr_ns"))


def build(page: DiffPage) -> dict:
    r = page.result
    return {"st": r["step_time_ns"], "steps": r["steps"], "noise": r["noise"], "verdict": page.verdict,
            "stats": STATS}
