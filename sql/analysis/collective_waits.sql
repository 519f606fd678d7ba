-- collective_waits: each collective (communication kernel) of each rank in each step,
-- matched across the ranks of a run by step name and order within the step. A
-- collective cannot finish before every rank has joined it; the rank whose kernel
-- started last kept the others waiting. One row per rank and collective.
--
-- depends: rank_runs, gpu_op_class, traces, steps
--
-- @column run_id        Run (rank_runs.run_id).
-- @column rank          Rank within the run.
-- @column step          Step name (as in steps).
-- @column ordinal       Order of the collective within the step on that rank (0 = first).
-- @column name          Communication kernel name.
-- @column arrival_ns    Kernel start on the Unix-epoch clock (ns).
-- @column is_last       True for the rank that arrived last.
-- @column wait_ns       How long this rank waited for the last one (ns; 0 for the last).
CREATE OR REPLACE VIEW collective_waits AS
WITH comm AS (
    SELECT r.run_id, r.rank, s.step, o.name,
           o.start_ns + t.clock_offset_ns AS arrival_ns,
           row_number() OVER (PARTITION BY o.trace_id, o.pid, s.step ORDER BY o.start_ns) - 1 AS ordinal
    FROM gpu_op_class o
    JOIN rank_runs r ON r.trace_id = o.trace_id AND r.pid = o.pid
    JOIN traces t ON t.trace_id = o.trace_id
    JOIN steps s ON s.trace_id = o.trace_id AND s.pid = o.pid
                AND o.start_ns >= s.start_ns AND o.start_ns < s.end_ns
    WHERE o.op_class = 'communication'
),
matched AS (
    SELECT *, count(*) OVER (PARTITION BY run_id, step, ordinal) AS ranks_present,
           count(DISTINCT rank) OVER (PARTITION BY run_id) AS ranks_in_run,
           max(arrival_ns) OVER (PARTITION BY run_id, step, ordinal) AS last_arrival_ns
    FROM comm
)
SELECT run_id, rank, step, ordinal, name, arrival_ns,
       arrival_ns = last_arrival_ns AS is_last,
       last_arrival_ns - arrival_ns AS wait_ns
FROM matched
WHERE ranks_present = ranks_in_run AND ranks_in_run >= 2;
