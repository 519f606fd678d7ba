-- collective_waits: each collective of each rank in each step, matched across the ranks
-- of a run as collective_instance_ranks matches them (process group and sequence number,
-- else aligned order). A collective cannot finish before every rank has joined it; the
-- rank whose kernel started last kept the others waiting. Arrivals are on the clock of
-- the run's reference rank: each trace's applied clock offset (rank_clock_offsets) is
-- subtracted. One row per rank and matched
-- collective launched inside a step on that rank (by kernel start when the launch is
-- not in the trace).
--
-- depends: collective_instance_ranks, collectives, steps, rank_clock_offsets
--
-- @column run_id        Run (rank_runs.run_id).
-- @column rank          Rank within the run.
-- @column step          Step name (as in steps) on that rank.
-- @column ordinal       Order of the collective within the step on that rank (0 = first).
-- @column name          Communication kernel name.
-- @column arrival_ns    Kernel start on the Unix-epoch clock of the reference rank (rank_clock_offsets) (ns).
-- @column is_last       True for the rank that arrived last.
-- @column wait_ns       How long this rank waited for the last one to start (ns; 0 for the last).
CREATE OR REPLACE VIEW collective_waits AS
WITH aligned AS (
    SELECT w.run_id, w.instance, w.rank, w.trace_id, w.pid, w.call_index,
           w.arrival_ns - coalesce(o.applied_offset_ns, 0) AS arrival_ns
    FROM collective_instance_ranks w
    LEFT JOIN rank_clock_offsets o ON o.run_id = w.run_id AND o.trace_id = w.trace_id
    WHERE w.matched_by <> 'single'
),
matched AS (
    SELECT w.run_id, w.instance, w.rank, w.trace_id, w.pid, w.arrival_ns, c.kernel_name, c.start_ns,
           coalesce(c.launch_start_ns, c.start_ns) AS launched_ns,
           max(w.arrival_ns) OVER (PARTITION BY w.run_id, w.instance) AS last_arrival_ns,
           w.arrival_ns = last_arrival_ns AS is_last
    FROM aligned w
    JOIN collectives c ON c.trace_id = w.trace_id AND c.pid = w.pid AND c.call_index = w.call_index
)
SELECT m.run_id, m.rank, s.step,
       row_number() OVER (PARTITION BY m.trace_id, m.pid, s.step ORDER BY m.start_ns, m.instance) - 1 AS ordinal,
       m.kernel_name AS name, m.arrival_ns, m.is_last, m.last_arrival_ns - m.arrival_ns AS wait_ns
FROM matched m
JOIN steps s ON s.trace_id = m.trace_id AND s.pid = m.pid  -- launches: the host range
            AND m.launched_ns >= coalesce(s.host_start_ns, s.start_ns) AND m.launched_ns < coalesce(s.host_end_ns, s.end_ns);
