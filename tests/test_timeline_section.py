"""The page's step timeline (reports/sections/timeline.py, sql/analysis/timeline.sql,
reports/timeline_svg.py) on the bundled samples: its marks account for every GPU operation of the
step in the trace's own tables, K1 is the step's longest one, and marks of a lane closer than
the merge distance are merged."""

from __future__ import annotations

import pytest
from tracelake.reports.page import Page
from tracelake.reports.sections import timeline


@pytest.fixture(scope="module")
def figures(_sample_db) -> dict:
    con = _sample_db.cursor()
    out = {}
    for (trace_id,) in con.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall():
        page = Page.open(con, trace_id)
        step = timeline.median_step(page)
        out[trace_id] = (step, timeline.figure(page, step))
    assert len(out) == 4 and all(fig is not None for _, fig in out.values())
    return out


def _gpu_ops(con, trace_id: str, step: dict) -> tuple[int, int, int]:
    """(operations, their time clipped to the step, the longest) from the trace's own tables."""
    return con.execute("""
        WITH ops AS (
            SELECT start_ns, end_ns FROM kernels WHERE trace_id = $t AND pid = $pid
            UNION ALL SELECT start_ns, end_ns FROM memcpy WHERE trace_id = $t AND pid = $pid
            UNION ALL SELECT start_ns, end_ns FROM memset WHERE trace_id = $t AND pid = $pid
        ), clipped AS (
            SELECT least(end_ns, $t1) - greatest(start_ns, $t0) AS ns FROM ops
            WHERE start_ns < $t1 AND end_ns > $t0
        )
        SELECT count(*), sum(ns), max(ns) FROM clipped""",
                       {"t": trace_id, "pid": step["pid"], "t0": step["start_ns"], "t1": step["end_ns"]}).fetchone()


def test_marks_account_for_every_gpu_operation_of_the_step(figures, _sample_db):
    con = _sample_db.cursor()
    for trace_id, (step, fig) in figures.items():
        streams = fig.rows.filter(fig.rows["lane"].str.contains(" stream ") & (fig.rows["layer"] != "path"))
        count, busy_ns, longest_ns = _gpu_ops(con, trace_id, step)
        assert streams["ops"].sum() == count, trace_id
        assert streams["busy_ms"].sum() == pytest.approx(busy_ns / 1e6, rel=1e-9), trace_id
        k1 = fig.rows.filter(fig.rows["label"] == "K1")
        assert k1.height == 1 and k1["ms"][0] == pytest.approx(longest_ns / 1e6, rel=1e-9), trace_id


def test_marks_of_a_lane_closer_than_the_merge_distance_are_one(figures):
    for trace_id, (step, fig) in figures.items():
        merge_ms = timeline.MERGE_PX * max(1, (step["end_ns"] - step["start_ns"]) // timeline.WIDTH) / 1e6
        unlabelled = fig.rows.filter(fig.rows["label"].is_null()).sort("lane", "category", "start_ms")
        for (lane, category), marks in unlabelled.group_by("lane", "category"):
            reach = None
            for start, end in marks.sort("start_ms").select("start_ms", "end_ms").iter_rows():
                assert reach is None or start >= reach + merge_ms - 1e-9, (trace_id, lane, category, start)
                reach = end if reach is None else max(reach, end)
        assert fig.rows.height < 500, trace_id  # 977 marks on the ResNet-50 sample before merging by pixel
