-- stragglers: per run and step, the rank that arrived last at most collectives and
-- how long the other ranks waited for the last arrival in total.
--
-- depends: collective_waits
--
-- @column run_id             Run (rank_runs.run_id).
-- @column step               Step name (as in steps).
-- @column collectives        Collectives matched across all ranks in the step.
-- @column straggler_rank     Rank that arrived last most often (the lowest of those as often).
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
       arg_min(p.rank, (-p.times_last, p.rank)) AS straggler_rank,  -- ties: the lowest rank
       max(p.times_last) AS times_last,
       CAST(sum(w.wait_ns) AS BIGINT) AS others_wait_ns,
       max(w.wait_ns) AS max_wait_ns
FROM collective_waits w
JOIN per_rank p USING (run_id, step, rank)
GROUP BY w.run_id, w.step;
