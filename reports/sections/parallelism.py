"""The parallelism of this trace's distributed run: its process groups with their roles
(process_groups), the communication each exposed per steady step (comm_overlap_groups), and each
rank's clock offset estimated from the collectives (rank_clock_offsets)."""

from __future__ import annotations

from ..page import Page, frame

NAME = "parallelism"
TITLE = "Parallelism"
VIEWS = ("rank_runs", "process_groups", "comm_overlap_groups", "rank_clock_offsets")


def groups(con, trace_id: str) -> list[dict]:
    """The process groups of this trace's run, with their exposed communication per steady step and rank
    (NULL where the steady steps ran none of the group's collectives); empty for a trace of no run."""
    return frame(con, """
        SELECT g.group_name, g.group_desc, g.role, g.role_basis, g.framework, g.ranks, g.group_size, g.layout,
               g.calls, g.operations, o.communication_ns, o.overlap_pct, o.exposed_ns, o.exposed_pct,
               o.worst_rank, o.worst_rank_exposed_ns
        FROM process_groups g
        LEFT JOIN comm_overlap_groups o USING (run_id, group_name)
        WHERE g.run_id IN (SELECT run_id FROM rank_runs WHERE trace_id = ?)
        ORDER BY o.exposed_ns DESC NULLS LAST, g.group_name""", [trace_id]).to_dicts()


def clocks(con, trace_id: str) -> list[dict]:
    """Each trace's clock offset against the run's lowest rank (rank_clock_offsets)."""
    return frame(con, """SELECT rank, reference_rank, collectives, offset_ns, uncertainty_ns, applied_offset_ns
                         FROM rank_clock_offsets
                         WHERE run_id IN (SELECT run_id FROM rank_runs WHERE trace_id = ?) ORDER BY rank""",
                 [trace_id]).to_dicts()


def build(page: Page) -> dict | None:
    if frame(page.con, "SELECT 1 FROM rank_runs WHERE trace_id = ? LIMIT 1", [page.trace_id]).is_empty():
        return None  # not a rank of a distributed run
    found = groups(page.con, page.trace_id)
    return {"groups": found, "clocks": clocks(page.con, page.trace_id)} if found else None
