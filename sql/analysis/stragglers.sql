-- rank_runs: which traces and processes are ranks of one distributed run. Nsight:
-- the processes of one export (rank = order of pid). PyTorch: files in one directory
-- with the same world size whose time spans overlap (rank from distributedInfo).
--
-- depends: gpu_op_class, traces, steps
--
-- @column trace_id  Trace.
-- @column pid       Process.
-- @column run_id    Identifier of the run.
-- @column rank      Rank within the run.
CREATE OR REPLACE VIEW rank_runs AS
WITH procs AS (
    SELECT DISTINCT trace_id, pid FROM gpu_op_class WHERE op_class = 'communication'
),
torch AS (
    SELECT t.trace_id, regexp_replace(t.path, '[^/]*$', '') || '|' || t.world_size AS group_key,
           t.rank, t.start_ns + t.clock_offset_ns AS start_epoch, t.end_ns + t.clock_offset_ns AS end_epoch
    FROM traces t
    WHERE t.source = 'pytorch' AND t.rank IS NOT NULL AND t.clock_offset_ns IS NOT NULL
),
clustered AS (
    SELECT *, sum(CASE WHEN start_epoch > prev_end THEN 1 ELSE 0 END)
                  OVER (PARTITION BY group_key ORDER BY start_epoch ROWS UNBOUNDED PRECEDING) AS cluster
    FROM (SELECT *, max(end_epoch) OVER (PARTITION BY group_key ORDER BY start_epoch
                                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
          FROM torch)
)
SELECT p.trace_id, p.pid, c.group_key || '|' || c.cluster AS run_id, c.rank
FROM procs p JOIN clustered c USING (trace_id)
UNION ALL
SELECT p.trace_id, p.pid, p.trace_id AS run_id,
       CAST(dense_rank() OVER (PARTITION BY p.trace_id ORDER BY p.pid) - 1 AS INTEGER) AS rank
FROM procs p JOIN traces t USING (trace_id)
WHERE t.source = 'nsys';

-- collective_waits: each collective (communication kernel) of each rank in each step,
-- matched across the ranks of a run by step name and order within the step. A
-- collective cannot finish before every rank has joined it; the rank whose kernel
-- started last kept the others waiting. One row per rank and collective.
--
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

-- stragglers: per run and step, the rank that arrived last at most collectives and
-- how long the other ranks waited for the last arrival in total.
--
-- @column collectives        Collectives matched across all ranks in the step.
-- @column straggler_rank     Rank that arrived last most often.
-- @column times_last         How many of the step's collectives it arrived last at.
-- @column others_wait_ns     Sum over the step's collectives of the other ranks' waits (ns); waits of
--                            collectives queued back to back overlap, so this can exceed the step.
-- @column max_wait_ns        Longest single wait in the step (ns).
CREATE OR REPLACE VIEW stragglers AS
WITH per_rank AS (
    SELECT run_id, step, rank, count(*) FILTER (WHERE is_last) AS times_last
    FROM collective_waits
    GROUP BY ALL
)
SELECT w.run_id, w.step,
       count(DISTINCT w.ordinal) AS collectives,
       arg_max(p.rank, p.times_last) AS straggler_rank,
       max(p.times_last) AS times_last,
       CAST(sum(w.wait_ns) AS BIGINT) AS others_wait_ns,
       max(w.wait_ns) AS max_wait_ns
FROM collective_waits w
JOIN per_rank p USING (run_id, step, rank)
GROUP BY w.run_id, w.step;
