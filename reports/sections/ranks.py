"""The ranks of this trace's distributed run side by side (rank_summary): the time split and the
waits at collectives, in two tables so the page stays 980 px wide."""

from __future__ import annotations

from ..page import Page, frame

NAME = "ranks"
TITLE = "Ranks of this run"
VIEWS = ("rank_runs", "rank_summary")


def rows(con, trace_id: str) -> list[dict]:
    """The ranks of this trace's run (rank_runs) side by side; empty for single-rank traces."""
    if frame(con, "SELECT 1 FROM rank_runs WHERE trace_id = ? LIMIT 1", [trace_id]).is_empty():
        return []  # not a rank of a distributed run: skip the run-wide views
    return frame(con, """SELECT * EXCLUDE (run_id) FROM rank_summary
                         WHERE run_id IN (SELECT run_id FROM rank_runs WHERE trace_id = ?) ORDER BY rank""",
                 [trace_id]).to_dicts()


def build(page: Page) -> dict | None:
    ranks = rows(page.con, page.trace_id)
    return {"ranks": ranks, "links": page.links, "this_trace": page.trace_id} if len(ranks) > 1 else None
