"""One step on a timeline: the steady step of the page's process whose wall time is the median
(steps, step_phases), with a lane per CPU thread that launched GPU work (its top-level operators,
and its CUDA API calls), per GPU stream and for each GPU's idle gaps (by cause), the critical path
along the top of its lanes, and the longest operations and gaps labelled. The rows come from
sql/analysis/timeline.sql (timeline_rows), which merges the marks of a lane less than MERGE_PX
pixels apart into spans (shaded by how full they are), so that a step of 10,000+ operations is a
few marks per pixel: legible, small, and quick to draw and to list beside the chart."""

from __future__ import annotations

import polars as pl

from .. import theme
from ..figure import Column, Figure
from ..page import Page
from ..timeline_svg import TimelineChart

NAME = "timeline"
TITLE = "One step on a timeline"
VIEWS = ("steps", "step_phases", "largest_gpu_gaps", "rank_runs")  # and timeline_rows (sql/analysis/timeline.sql)
WIDTH = 700  # the plot's width in pixels: px_ns = the step's length / WIDTH
MERGE_PX = 2  # marks of a lane less than this many pixels apart are merged into a span
LABELLED = 3  # the longest operations and the largest gaps labelled on the chart
OTHER_RANKS = 7  # other ranks' lanes at most: a page's size and time do not grow with the run's ranks


def median_step(page: Page) -> dict | None:
    """The steady step of the page's process with the median wall time (the lower of the two
    middle ones for an even count), with how many steady steps it was chosen from."""
    if page.steady is None:
        return None
    steps = page.sql("""
        SELECT s.step_index, s.step, s.start_ns, s.end_ns, s.wall_ns, s.rank
        FROM steps s JOIN step_phases p USING (trace_id, pid, step_index)
        WHERE s.trace_id = $trace AND s.pid = $pid AND p.phase = 'steady'
        ORDER BY s.wall_ns, s.step_index""", {"pid": page.steady["pid"]}).to_dicts()
    if not steps:
        return None
    step = steps[(len(steps) - 1) // 2]
    return {**step, "pid": page.steady["pid"], "of": len(steps), "at_ns": step["start_ns"] - page.origin_ns}


def lane_order(lanes: list[str]) -> list[str]:
    """Threads first (each thread's operators, then its CUDA API calls), then each GPU: its
    streams, then its idle lane; then the other ranks' GPUs, by rank."""
    def key(lane: str):
        words = lane.split()
        if words[0] == "thread":
            return (0, int(words[1]), len(words), 0)
        if words[0] == "rank":
            return (2, int(words[1]), int(words[3]), 0)
        device = int(words[1])
        return (1, device, 1 if words[2] == "idle" else 0, int(words[3]) if words[3:] and words[3] != "?" else -1)
    return sorted(set(lanes), key=key)


def other_ranks(page: Page, step: dict) -> list[dict]:
    """The same step (by name) of the other ranks of the page's run (rank_runs), in rank order."""
    return page.sql("""
        SELECT r.trace_id, r.rank, s.pid, s.start_ns, s.end_ns
        FROM rank_runs me JOIN rank_runs r ON r.run_id = me.run_id AND r.trace_id <> me.trace_id
        JOIN steps s ON s.trace_id = r.trace_id AND s.pid = r.pid AND s.step = $step
        WHERE me.trace_id = $trace AND me.pid = $pid ORDER BY r.rank""",
                    {"step": step["step"], "pid": step["pid"]}).to_dicts()


def shown_ranks(others: list[dict], rank: int | None, most: int = OTHER_RANKS) -> list[dict]:
    """The other ranks drawn, in rank order: all of them up to `most`; beyond, the ones whose step
    took longest and shortest, then the nearest ranks to the page's (lower first), `most` in all.
    Each page of a run of N ranks would otherwise draw N - 1 lanes: N^2 lanes over the run's pages."""
    if len(others) <= most:
        return others
    by_wall = sorted(others, key=lambda r: (r["end_ns"] - r["start_ns"], r["rank"]))
    chosen = [by_wall[-1]["rank"], by_wall[0]["rank"]]
    me = rank if rank is not None else 0
    for r in sorted(others, key=lambda r: (abs(r["rank"] - me), r["rank"])):
        if len(chosen) >= most:
            break
        if r["rank"] not in chosen:
            chosen.append(r["rank"])
    return [r for r in others if r["rank"] in chosen]


def _rows(page: Page, trace_id: str, pid: int, t0: int, t1: int, px_ns: int,
          macro: str = "timeline_rows") -> pl.DataFrame:
    """The rows of `macro` (timeline_rows, or timeline_gpu_rows: sql/analysis/timeline.sql) for a
    window of one process, times in ms since t0."""
    return page.sql(f"""
        SELECT lane, layer, category, (start_ns - $t0) / 1e6 AS start_ms, (end_ns - $t0) / 1e6 AS end_ms,
               (end_ns - start_ns) / 1e6 AS ms, ops, busy_ns / 1e6 AS busy_ms, name, label
        FROM {macro}($trace, $pid, $t0, $t1, $px, $merge, $labels)
        ORDER BY lane, start_ns, end_ns DESC, layer, category, name""",
                    {"trace": trace_id, "pid": pid, "t0": t0, "t1": t1, "px": px_ns, "merge": MERGE_PX * px_ns,
                     "labels": LABELLED})


def rows(page: Page, step: dict, others: list[dict] | None = None) -> pl.DataFrame:
    """timeline_rows of the step at WIDTH pixels, times in ms since the step's start, with their
    labels: K1.. on the longest GPU operations, G1.. on the largest gaps. Each other rank of the
    run (others) adds a lane 'rank R GPU d' (its streams and idle gaps in one lane: the gaps are
    where no stream runs; timeline_gpu_rows), timed from its own start of the step, unlabelled."""
    px_ns = max(1, (step["end_ns"] - step["start_ns"]) // WIDTH)
    frame = _rows(page, page.trace_id, step["pid"], step["start_ns"], step["end_ns"], px_ns)
    for r in others or []:
        theirs = _rows(page, r["trace_id"], r["pid"], r["start_ns"], r["end_ns"], px_ns, "timeline_gpu_rows")
        frame = pl.concat([frame, theirs.with_columns(
            (f"rank {r['rank']} GPU " + pl.col("lane").str.split(" ").list.get(1)).alias("lane"),
            pl.lit(None, pl.String).alias("label"))])
    return frame


COLUMNS = [Column("lane", "lane"), Column("layer", "mark"), Column("category", "category / cause"),
           Column("start_ms", "start since the step's start", "ms"), Column("ms", "length", "ms"),
           Column("ops", "operations (gaps, path edges)", "count"), Column("busy_ms", "their time", "ms"),
           Column("name", "name (a span's longest)"),
           Column("label", "label")]


def figure(page: Page, step: dict | None = None) -> Figure | None:
    step = step or median_step(page)
    if step is None:
        return None
    every = other_ranks(page, step)
    others = shown_ranks(every, step.get("rank"))
    frame = rows(page, step, others)
    if frame.is_empty():
        return None
    window_ms = max((s["end_ns"] - s["start_ns"]) / 1e6 for s in [step, *others])
    px_ns = max(1, (step["end_ns"] - step["start_ns"]) // WIDTH)
    merged = frame.filter(pl.col("layer") == "span")
    note = (f"{step['step']} (step #{step['step_index']}), the median wall time of the steady "
            f"step{'s' if step['of'] != 1 else ''} ({step['of']:,}) of process {step['pid']}: {theme.ms(step['wall_ns'])}. "
            f"One pixel is {theme.ms(px_ns)}: operations (and gaps) of a lane less than {MERGE_PX} pixels apart are merged "
            f"into one span ({merged['ops'].sum() or 0:,} operations in {merged.height:,} spans), shaded by how "
            f"busy it is (lighter: mostly empty); the labelled ones stay whole. GPU gaps are drawn from 10 µs and "
            f"one pixel. Black along the top of a lane: the critical path."
            + (f" The {len(others)} other ranks' GPUs: their {step['step']}, each from its own start." if others
               and len(others) == len(every) else "")
            + (f" {len(others)} of the {len(every)} other ranks' GPUs: the two whose {step['step']} took longest and "
               f"shortest, then the ranks nearest this one; each from its own start." if len(others) < len(every) else ""))
    return Figure("timeline", f"Timeline of {step['step']}", TimelineChart(
        frame, lane_order(frame["lane"].to_list()), WIDTH, window_ms), frame, COLUMNS, note=note)


def build(page: Page) -> dict | None:
    step = median_step(page)
    fig = figure(page, step) if step else None
    if fig is None:
        return None
    labelled = fig.rows.filter(pl.col("label").is_not_null()).sort(
        pl.col("label").str.slice(0, 1), pl.col("label").str.slice(1).cast(pl.Int32)).to_dicts()
    return {"figure": fig, "step": step, "labelled": labelled}
