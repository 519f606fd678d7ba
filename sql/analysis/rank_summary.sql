-- rank_summary: the ranks of each distributed run side by side: how each rank's GPU
-- time splits, how much of its communication compute hid, its median step, and how
-- long it waited at collectives for the others (and how often it was the one they
-- waited for, and how long they waited for it: collective_rank_waits). One row per run
-- and rank (rank_runs).
--
-- depends: rank_runs, collective_rank_waits, traces, temporal_breakdown, overlap, steps
-- materialize: per trace
--
-- @column run_id                     Run (rank_runs).
-- @column rank                       Rank within the run.
-- @column trace_id                   Trace of the rank.
-- @column file_name                  File of that trace.
-- @column run_label                  Name of the run: the folder of its rank files, or the file
--                                    when its ranks are processes of one export.
-- @column pid                        Process of the rank.
-- @column span_ns                    First to last GPU operation of the rank (ns).
-- @column compute_pct                temporal_breakdown.compute_pct (%).
-- @column non_compute_pct            temporal_breakdown.non_compute_pct (%).
-- @column idle_pct                   temporal_breakdown.idle_pct (%).
-- @column communication_ns           overlap.communication_ns (ns).
-- @column communication_overlap_pct  overlap.communication_overlap_pct (%).
-- @column median_step_ns             Median wall time of the rank's steps (ns).
-- @column collectives                Collectives matched across the ranks that it took part in.
-- @column collective_wait_ns         Time its collectives waited for other ranks (duration
--                                    beyond the transfer time), summed (ns).
-- @column wait_pct                   collective_wait_ns / its collectives' duration x 100.
-- @column arrived_last               Collectives it was the last rank to join.
-- @column others_wait_ns             Time the other ranks waited at the collectives it joined
--                                    last (ns).
CREATE OR REPLACE VIEW rank_summary AS
WITH waits AS (
    SELECT run_id, rank, collectives, wait_ns AS collective_wait_ns, wait_pct, times_last AS arrived_last,
           others_wait_ns
    FROM collective_rank_waits
),
step_times AS (SELECT trace_id, pid, median(wall_ns) AS median_step_ns FROM steps GROUP BY trace_id, pid)
SELECT r.run_id, r.rank, r.trace_id, t.file_name,
       CASE WHEN count(DISTINCT r.trace_id) OVER (PARTITION BY r.run_id) > 1
            THEN regexp_extract(t.path, '([^/]+)/[^/]*$', 1) ELSE t.file_name END AS run_label,
       r.pid, b.span_ns, b.compute_pct, b.non_compute_pct, b.idle_pct,
       o.communication_ns, o.communication_overlap_pct, s.median_step_ns, w.collectives, w.collective_wait_ns,
       w.wait_pct, coalesce(w.arrived_last, 0) AS arrived_last, w.others_wait_ns
FROM rank_runs r
JOIN traces t USING (trace_id)
LEFT JOIN temporal_breakdown b USING (trace_id, pid)
LEFT JOIN overlap o USING (trace_id, pid)
LEFT JOIN step_times s USING (trace_id, pid)
LEFT JOIN waits w ON w.run_id = r.run_id AND w.rank = r.rank;
