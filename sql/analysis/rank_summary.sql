-- rank_summary: the ranks of each distributed run side by side: how each rank's GPU
-- time splits, how much of its communication compute hid, its median step, and how
-- long it waited at collectives for the others (and how often it was the one they
-- waited for). One row per run and rank (rank_runs).
--
-- depends: rank_runs, collective_waits, traces, temporal_breakdown, overlap, steps
--
-- @column run_id                     Run (rank_runs).
-- @column rank                       Rank within the run.
-- @column trace_id                   Trace of the rank.
-- @column file_name                  File of that trace.
-- @column pid                        Process of the rank.
-- @column span_ns                    First to last GPU operation of the rank (ns).
-- @column compute_pct                temporal_breakdown.compute_pct (%).
-- @column non_compute_pct            temporal_breakdown.non_compute_pct (%).
-- @column idle_pct                   temporal_breakdown.idle_pct (%).
-- @column communication_ns           overlap.communication_ns (ns).
-- @column communication_overlap_pct  overlap.communication_overlap_pct (%).
-- @column median_step_ns             Median wall time of the rank's steps (ns).
-- @column collective_wait_ns         Time its collectives waited for the last rank to
--                                    join, summed over matched collectives (ns).
-- @column arrived_last               Collectives it was the last rank to join.
CREATE OR REPLACE VIEW rank_summary AS
WITH waits AS (
    SELECT run_id, rank, sum(wait_ns) AS collective_wait_ns, count(*) FILTER (WHERE is_last) AS arrived_last
    FROM collective_waits GROUP BY run_id, rank
),
step_times AS (SELECT trace_id, pid, median(wall_ns) AS median_step_ns FROM steps GROUP BY trace_id, pid)
SELECT r.run_id, r.rank, r.trace_id, t.file_name, r.pid, b.span_ns, b.compute_pct, b.non_compute_pct, b.idle_pct,
       o.communication_ns, o.communication_overlap_pct, s.median_step_ns, w.collective_wait_ns,
       coalesce(w.arrived_last, 0) AS arrived_last
FROM rank_runs r
JOIN traces t USING (trace_id)
LEFT JOIN temporal_breakdown b USING (trace_id, pid)
LEFT JOIN overlap o USING (trace_id, pid)
LEFT JOIN step_times s USING (trace_id, pid)
LEFT JOIN waits w ON w.run_id = r.run_id AND w.rank = r.rank;
