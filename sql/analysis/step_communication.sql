-- step_communication: per training step and rank, how much communication the GPU did, how
-- much of it compute hid (ran at the same time, as in overlap), how much was exposed
-- (the GPU communicated and did nothing else), and of the step's collectives how long
-- they waited for other ranks and how long they transferred (collective_instance_ranks,
-- the matching of collective_instances). Communication is the same kernels everywhere:
-- the 'communication' class of gpu_op_class. One row per step and rank.
--
-- depends: steps, gpu_op_class, collective_instance_ranks, collectives, rank_runs, intervals_union_ns
-- materialize: per trace
--
-- @column trace_id          Trace.
-- @column rank              Rank (NULL when unknown).
-- @column pid               Process.
-- @column step              Step name.
-- @column step_index        Order of the step in its process (0 = first).
-- @column wall_ns           Step length (ns).
-- @column communication_ns  Time in the step with communication kernels running (ns).
-- @column hidden_ns         Part of it during which compute kernels ran too (ns).
-- @column exposed_ns        communication_ns - hidden_ns: communication nothing hid (ns).
-- @column exposed_pct       exposed_ns / wall_ns x 100.
-- @column collectives       Collectives the rank launched in the step (by kernel start when the
--                           launch is not in the trace).
-- @column wait_ns           Their time waiting for other ranks (ns; NULL without other ranks in the lake).
-- @column transfer_ns       Their transfer time (ns; NULL without other ranks in the lake).
CREATE OR REPLACE VIEW step_communication AS
WITH clipped AS (
    SELECT s.trace_id, s.pid, s.step_index,
           greatest(o.start_ns, s.start_ns) AS start_ns, least(o.end_ns, s.end_ns) AS end_ns
    FROM steps s
    JOIN gpu_op_class o ON o.trace_id = s.trace_id AND o.pid = s.pid
                       AND o.start_ns < s.end_ns AND o.end_ns > s.start_ns
    WHERE o.op_class IN ('communication', 'compute')
),
laned AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index} AS lane, start_ns, end_ns FROM clipped
),
either AS (  -- length of the union of communication and compute in the step
    SELECT lane.trace_id, lane.pid, lane.step_index, covered_ns AS ns FROM intervals_union_ns(laned)
),
calls AS (
    SELECT s.trace_id, s.pid, s.step_index, count(*) AS collectives,
           sum(w.wait_ns) FILTER (WHERE w.matched_by <> 'single') AS wait_ns,
           sum(w.transfer_ns) FILTER (WHERE w.matched_by <> 'single') AS transfer_ns
    FROM steps s
    JOIN collectives c ON c.trace_id = s.trace_id AND c.pid = s.pid
                      AND coalesce(c.launch_start_ns, c.start_ns) >= s.start_ns
                      AND coalesce(c.launch_start_ns, c.start_ns) < s.end_ns
    LEFT JOIN collective_instance_ranks w ON w.trace_id = c.trace_id AND w.pid = c.pid
                                         AND w.call_index = c.call_index
    GROUP BY ALL
),
per_step AS (
    SELECT s.trace_id, coalesce(r.rank, s.rank) AS rank, s.pid, s.step, s.step_index, s.wall_ns, s.communication_ns,
           s.communication_ns + s.compute_ns - coalesce(e.ns, 0) AS hidden_ns,
           c.collectives, c.wait_ns, c.transfer_ns
    FROM steps s
    LEFT JOIN either e USING (trace_id, pid, step_index)
    LEFT JOIN calls c USING (trace_id, pid, step_index)
    LEFT JOIN rank_runs r USING (trace_id, pid)
)
SELECT trace_id, rank, pid, step, step_index, wall_ns, communication_ns,
       CAST(hidden_ns AS BIGINT) AS hidden_ns,
       CAST(communication_ns - hidden_ns AS BIGINT) AS exposed_ns,
       100.0 * (communication_ns - hidden_ns) / nullif(wall_ns, 0) AS exposed_pct,
       coalesce(collectives, 0) AS collectives,
       CAST(wait_ns AS BIGINT) AS wait_ns, CAST(transfer_ns AS BIGINT) AS transfer_ns
FROM per_step;
