"""The page's step timeline (reports/sections/timeline.py, sql/analysis/timeline.sql,
reports/timeline_svg.py) on the bundled samples: its marks account for every GPU operation of the
step in the trace's own tables, K1 is the step's longest one, marks of a lane closer than the
merge distance are merged, and the SVG draws a rectangle per row where the row says."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from tracelake.reports.page import Page
from tracelake.reports.sections import timeline
from tracelake.reports.timeline_svg import COLORS, PATH_COLOR


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


def test_another_ranks_lanes_are_its_own_timelines_gpu_lanes(figures, _sample_db):
    """Another rank's lanes beside a page's step come from timeline_gpu_rows, which reads neither
    the CPU operations nor the critical path: its rows are timeline_rows' GPU stream and idle
    lanes, labelled marks kept whole, for each sample's step; and they account for every GPU
    operation of the step."""
    con = _sample_db.cursor()
    for trace_id, (step, _) in figures.items():
        px = max(1, (step["end_ns"] - step["start_ns"]) // timeline.WIDTH)
        args = {"t": trace_id, "pid": step["pid"], "t0": step["start_ns"], "t1": step["end_ns"], "px": px,
                "merge": timeline.MERGE_PX * px, "labels": timeline.LABELLED}
        call = "($t, $pid, $t0, $t1, $px, $merge, $labels) ORDER BY ALL"
        whole = con.execute(f"SELECT * FROM timeline_rows{call}", args).fetchall()
        gpu = con.execute(f"SELECT * FROM timeline_gpu_rows{call}", args).fetchall()
        assert gpu == [r for r in whole if r[0].startswith("GPU") and r[1] != "path"] and gpu, trace_id
        assert any(r[8] for r in gpu) and any(not r[0].startswith("GPU") for r in whole)
        count = sum(r[5] for r in gpu if " stream " in r[0])
        assert count == _gpu_ops(con, trace_id, step)[0], trace_id


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


def test_the_svg_draws_a_rectangle_per_row_where_the_row_says(figures):
    for trace_id, (_, fig) in figures.items():
        chart = fig.chart
        svg = ET.fromstring(chart.to_svg())
        ns = "{http://www.w3.org/2000/svg}"
        lanes = {t.text: float(t.get("y")) for t in svg.iter(f"{ns}text") if t.text in chart.lanes}
        assert list(lanes) == chart.lanes
        marks = {g.get("fill"): list(g.iter(f"{ns}rect")) for g in svg.findall(f"{ns}g") if g.get("fill") != "#1d2733"}
        frame = svg.findall(f"{ns}rect")[1]  # the plot's frame, after the background
        x0, scale = float(frame.get("x")), float(frame.get("width")) / chart.window_ms
        seen: dict[str, int] = {}
        for row in fig.rows.iter_rows(named=True):
            color = PATH_COLOR if row["layer"] == "path" else COLORS[row["category"]]
            rect = marks[color][seen.get(color, 0)]
            seen[color] = seen.get(color, 0) + 1
            assert float(rect.get("x")) == pytest.approx(x0 + row["start_ms"] * scale, abs=0.06)
            assert float(rect.get("width")) == pytest.approx(max(1.0, row["ms"] * scale), abs=0.06)
            middle = float(rect.get("y")) + float(rect.get("height")) / 2
            assert lanes[row["lane"]] - 13 < middle < lanes[row["lane"]] + 13, (trace_id, row)
        assert seen == {color: len(rects) for color, rects in marks.items()}, trace_id  # no other marks
        labels = [t.text for t in svg.iter(f"{ns}text") if re.fullmatch(r"[KG]\d+", t.text or "")]
        assert sorted(labels) == sorted(fig.rows["label"].drop_nulls().to_list()), trace_id


def test_a_large_run_draws_seven_other_ranks_the_extremes_and_the_nearest():
    """A page of rank 10 in a run of 64: lanes for the ranks whose step took longest (40) and
    shortest (3), then the nearest ranks (lower first at equal distance), 7 in all; a run of 8 draws every other rank."""
    others = [{"rank": r, "start_ns": 0, "end_ns": 1000 + (500 if r == 40 else -500 if r == 3 else r)}
              for r in range(64) if r != 10]
    assert [r["rank"] for r in timeline.shown_ranks(others, 10)] == [3, 7, 8, 9, 11, 12, 40]
    assert timeline.shown_ranks(others[:7], 10) == others[:7]
    assert len(timeline.shown_ranks(others, None)) == 7  # no rank: nearest to 0
