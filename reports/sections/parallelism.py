"""The parallelism of this trace's distributed run: its process groups with their roles
(process_groups), the communication each exposed per steady step (comm_overlap_groups), the
pipeline's bubbles per stage against the schedule's theoretical one (pipeline_bubbles), FSDP's
all-gathers against the compute that waits for them and its reduce-scatters' overlap with the
backward (fsdp_prefetch_steps), and each rank's clock offset estimated from the collectives
(rank_clock_offsets)."""

from __future__ import annotations

from ..page import Page, frame

NAME = "parallelism"
TITLE = "Parallelism"
VIEWS = ("rank_runs", "process_groups", "comm_overlap_groups", "pipeline_bubbles", "fsdp_prefetch_steps",
         "steady_steps", "rank_clock_offsets")
STEP_ROWS = 60  # the per-step bubble table shows the first steady steps of each stage, up to this many rows

_RUN = "SELECT run_id FROM rank_runs WHERE trace_id = ?"


def groups(con, trace_id: str) -> list[dict]:
    """The process groups of this trace's run, with their exposed communication per steady step and rank
    (NULL where the steady steps ran none of the group's collectives); empty for a trace of no run."""
    return frame(con, f"""
        SELECT g.group_name, g.group_desc, g.role, g.role_basis, g.framework, g.ranks, g.group_size, g.layout,
               g.calls, g.operations, o.communication_ns, o.overlap_pct, o.exposed_ns, o.exposed_pct,
               o.worst_rank, o.worst_rank_exposed_ns
        FROM process_groups g
        LEFT JOIN comm_overlap_groups o USING (run_id, group_name)
        WHERE g.run_id IN ({_RUN})
        ORDER BY o.exposed_ns DESC NULLS LAST, g.group_name""", [trace_id]).to_dicts()


def pipeline_stages(con, trace_id: str) -> list[dict]:
    """Per pipeline stage of the run, over its steady steps: the mean step, occupied time and bubble,
    the bubble's share of the steps (sum over sum), the part blocked on sends and receives, the
    bubble within the schedule's span, the theoretical bubble, and in how many steps the stage held
    the others up."""
    return frame(con, f"""
        SELECT b.stage, any_value(b.rank) AS rank, count(*) AS steps, max(b.stages) AS stages,
               max(b.microbatches) AS microbatches, avg(b.wall_ns) AS wall_ns, avg(b.busy_ns) AS busy_ns,
               avg(b.bubble_ns) AS bubble_ns, 100.0 * sum(b.bubble_ns) / sum(b.wall_ns) AS bubble_pct,
               avg(b.p2p_wait_ns) AS p2p_wait_ns, avg(b.schedule_bubble_pct) AS schedule_bubble_pct,
               avg(b.theoretical_bubble_pct) AS theoretical_bubble_pct,
               count(*) FILTER (WHERE b.is_holding) AS steps_holding
        FROM pipeline_bubbles b
        JOIN steady_steps s USING (trace_id, pid, step_index)
        WHERE b.run_id IN ({_RUN})
        GROUP BY b.stage ORDER BY b.stage""", [trace_id]).to_dicts()


def pipeline_steps(con, trace_id: str) -> list[dict]:
    """The bubble of each steady step on each stage, in step order (the first STEP_ROWS rows)."""
    return frame(con, f"""
        SELECT b.step, b.stage, b.rank, b.microbatches, b.wall_ns, b.busy_ns, b.bubble_ns, b.bubble_pct,
               b.p2p_wait_ns, b.schedule_bubble_pct, b.is_holding
        FROM pipeline_bubbles b
        JOIN steady_steps s USING (trace_id, pid, step_index)
        WHERE b.run_id IN ({_RUN})
        ORDER BY b.step_index, b.stage LIMIT {STEP_ROWS}""", [trace_id]).to_dicts()


def fsdp_ranks(con, trace_id: str) -> list[dict]:
    """Per rank of an FSDP2 run, over its steady steps: all-gathers per step, how many were prefetched
    and how many late, the compute stream's wait for them per step (forward, backward, the share that
    was the all-gathers waiting for another rank) and the reduce-scatters' time and the part the
    backward's compute hid."""
    return frame(con, f"""
        SELECT f.rank, count(*) AS steps, avg(f.all_gathers) AS all_gathers, avg(f.prefetched) AS prefetched,
               avg(f.late) AS late, avg(f.wait_ns) AS wait_ns, avg(f.forward_wait_ns) AS forward_wait_ns,
               avg(f.backward_wait_ns) AS backward_wait_ns,
               100.0 * sum(f.peer_wait_ns) / nullif(sum(f.wait_ns), 0) AS peer_wait_pct, avg(f.wait_pct) AS wait_pct,
               avg(f.reduce_scatter_ns) AS reduce_scatter_ns,
               100.0 * sum(f.reduce_scatter_overlapped_ns) / nullif(sum(f.reduce_scatter_ns), 0) AS reduce_scatter_hidden_pct
        FROM fsdp_prefetch_steps f
        JOIN steady_steps s USING (trace_id, pid, step_index)
        WHERE f.run_id IN ({_RUN})
        GROUP BY f.rank ORDER BY f.rank""", [trace_id]).to_dicts()


def clocks(con, trace_id: str) -> list[dict]:
    """Each trace's clock offset against the run's lowest rank (rank_clock_offsets)."""
    return frame(con, f"""SELECT rank, reference_rank, collectives, offset_ns, uncertainty_ns, applied_offset_ns
                          FROM rank_clock_offsets WHERE run_id IN ({_RUN}) ORDER BY rank""", [trace_id]).to_dicts()


def build(page: Page) -> dict | None:
    if frame(page.con, "SELECT 1 FROM rank_runs WHERE trace_id = ? LIMIT 1", [page.trace_id]).is_empty():
        return None  # not a rank of a distributed run
    found = groups(page.con, page.trace_id)
    if not found:
        return None
    return {"groups": found, "pipeline": pipeline_stages(page.con, page.trace_id),
            "pipeline_steps": pipeline_steps(page.con, page.trace_id), "step_rows": STEP_ROWS,
            "fsdp": fsdp_ranks(page.con, page.trace_id), "clocks": clocks(page.con, page.trace_id)}
