-- steady_collectives: the collectives of the steady steps, per process, operation and the
-- rank that arrived last at them: what `tracelake diff` compares for communication. A
-- collective counts in the steady step its first kernel starts in (steady_steps, as in
-- steady_gpu_work). Its time (collectives.duration_ns: first kernel start to last kernel
-- end) is split as collective_instance_ranks splits it: the wait for the other ranks, and
-- the transfer once all had joined. A collective matched on no other rank (a trace alone
-- in the lake, or at the edge of the ranks' profiling windows) has no wait it can tell:
-- its whole time is transfer and last_rank is NULL. Divide by the process's steady steps
-- for a per-step figure.
--
-- depends: collectives, collective_instance_ranks, steady_steps
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column rank         Rank of the process (NULL when unknown).
-- @column operation    all_reduce, all_gather, ... (collectives.operation; the kernel name when unknown).
-- @column last_rank    Rank that arrived last at these collectives (the lowest of those that arrived at
--                      the same time; NULL: not matched across ranks).
-- @column calls        Collectives.
-- @column duration_ns  Their summed duration (ns): transfer_ns + wait_ns.
-- @column wait_ns      The part of it this process waited for the last rank (ns).
-- @column transfer_ns  duration_ns - wait_ns (ns).
-- @column skew_ns      Summed arrival skew of these collectives: last arrival - first arrival (ns).
-- @column bytes        Summed per-rank buffer sizes, as nccl-tests counts them (bytes; NULL when unknown).
-- @column kernel       The communication kernel name (the most frequent; ties to the first name).
CREATE OR REPLACE VIEW steady_collectives AS
WITH instances AS (
    SELECT run_id, instance, min(rank) FILTER (WHERE is_last) AS last_rank,
           max(arrival_ns) - min(arrival_ns) AS skew_ns
    FROM collective_instance_ranks
    WHERE matched_by <> 'single'
    GROUP BY ALL
),
steady AS (
    SELECT c.trace_id, c.pid, c.rank, coalesce(c.operation, c.kernel_name) AS operation, i.last_rank,
           c.duration_ns, least(coalesce(w.wait_ns, 0), c.duration_ns) AS wait_ns, i.skew_ns, c.bytes, c.kernel_name
    FROM collectives c
    SEMI JOIN steady_steps s ON s.trace_id = c.trace_id AND s.pid = c.pid
                            AND c.start_ns >= s.start_ns AND c.start_ns < s.end_ns
    LEFT JOIN collective_instance_ranks w ON w.trace_id = c.trace_id AND w.pid = c.pid
                                         AND w.call_index = c.call_index AND w.matched_by <> 'single'
    LEFT JOIN instances i ON i.run_id = w.run_id AND i.instance = w.instance
)
SELECT trace_id, pid, any_value(rank) AS rank, operation, last_rank, count(*) AS calls,
       CAST(sum(duration_ns) AS BIGINT) AS duration_ns, CAST(sum(wait_ns) AS BIGINT) AS wait_ns,
       CAST(sum(duration_ns - wait_ns) AS BIGINT) AS transfer_ns, CAST(sum(skew_ns) AS BIGINT) AS skew_ns,
       CAST(sum(bytes) AS BIGINT) AS bytes, mode(kernel_name ORDER BY kernel_name) AS kernel
FROM steady
GROUP BY trace_id, pid, operation, last_rank;
