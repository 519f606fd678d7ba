-- comm_overlap: per step, process group and rank, how long the group's collectives ran
-- on the rank's GPU, how much of that compute hid (a compute kernel of the rank ran at
-- the same time) and how much was exposed (no compute ran: the step waited for the
-- communication), and the exposed time's share of the step. A collective is the span of
-- its kernels (collectives.start_ns .. end_ns: transfer and any wait for other ranks),
-- clipped to the step's window (steps.start_ns .. end_ns); collectives of one group that
-- run at once count once. Another group's communication does not hide a group's: only
-- compute does. Steps on all ranks; the summary comm_overlap_groups keeps the steady ones.
-- One row per step, rank (process) and group with communication in the step.
--
-- depends: steps, collectives, process_group_calls, process_groups, gpu_op_class, intervals_union_ns
--
-- @column run_id            Distributed run.
-- @column trace_id          Trace.
-- @column rank              Rank (collectives.rank; NULL when unknown).
-- @column pid               Process.
-- @column step              Step name.
-- @column step_index        Order of the step in its process (0 = first).
-- @column wall_ns           Step length (ns).
-- @column group_name        Process group (process_group_calls.group_name).
-- @column role              The group's role (process_groups.role).
-- @column collectives       The group's collectives with kernels in the step on this rank.
-- @column communication_ns  Time in the step with the group's collectives running (ns).
-- @column overlapped_ns     Part of it during which compute ran too (ns).
-- @column exposed_ns        communication_ns - overlapped_ns: the group's communication nothing hid (ns).
-- @column exposed_pct       exposed_ns / wall_ns x 100: the share of the step it cost.
CREATE OR REPLACE VIEW comm_overlap AS
WITH comm AS MATERIALIZED (
    SELECT s.trace_id, s.pid, s.step_index, g.group_name,
           greatest(c.start_ns, s.start_ns) AS start_ns, least(c.end_ns, s.end_ns) AS end_ns
    FROM steps s
    JOIN collectives c ON c.trace_id = s.trace_id AND c.pid = s.pid
                      AND c.start_ns < s.end_ns AND c.end_ns > s.start_ns
    JOIN process_group_calls g ON g.trace_id = c.trace_id AND g.pid = c.pid AND g.call_index = c.call_index
),
compute AS MATERIALIZED (
    SELECT s.trace_id, s.pid, s.step_index,
           greatest(o.start_ns, s.start_ns) AS start_ns, least(o.end_ns, s.end_ns) AS end_ns
    FROM steps s
    JOIN gpu_op_class o ON o.trace_id = s.trace_id AND o.pid = s.pid
                       AND o.start_ns < s.end_ns AND o.end_ns > s.start_ns
    WHERE o.op_class = 'compute'
      AND (s.trace_id, s.pid, s.step_index) IN (SELECT (trace_id, pid, step_index) FROM comm)
),
groups_in_step AS (
    SELECT DISTINCT trace_id, pid, step_index, group_name FROM comm
),
comm_only AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index, 'group_name': group_name} AS lane,
           start_ns, end_ns
    FROM comm
),
comm_or_compute AS (
    SELECT * FROM comm_only
    UNION ALL
    SELECT {'trace_id': k.trace_id, 'pid': k.pid, 'step_index': k.step_index, 'group_name': g.group_name},
           k.start_ns, k.end_ns
    FROM compute k JOIN groups_in_step g USING (trace_id, pid, step_index)
),
compute_only AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index} AS lane, start_ns, end_ns FROM compute
),
lengths AS (
    SELECT c.lane.trace_id, c.lane.pid, c.lane.step_index, c.lane.group_name, c.covered_ns AS communication_ns,
           e.covered_ns AS either_ns
    FROM intervals_union_ns(comm_only) c
    JOIN intervals_union_ns(comm_or_compute) e ON e.lane = c.lane
),
computing AS (
    SELECT lane.trace_id, lane.pid, lane.step_index, covered_ns AS compute_ns FROM intervals_union_ns(compute_only)
),
calls AS (
    SELECT trace_id, pid, step_index, group_name, count(*) AS collectives FROM comm GROUP BY ALL
)
SELECT c.run_id, s.trace_id, c.rank, s.pid, s.step, s.step_index, s.wall_ns, l.group_name, g.role,
       n.collectives, CAST(l.communication_ns AS BIGINT) AS communication_ns,
       CAST(l.communication_ns + coalesce(k.compute_ns, 0) - l.either_ns AS BIGINT) AS overlapped_ns,
       CAST(l.either_ns - coalesce(k.compute_ns, 0) AS BIGINT) AS exposed_ns,
       100.0 * (l.either_ns - coalesce(k.compute_ns, 0)) / nullif(s.wall_ns, 0) AS exposed_pct
FROM lengths l
JOIN steps s ON s.trace_id = l.trace_id AND s.pid = l.pid AND s.step_index = l.step_index
JOIN calls n ON n.trace_id = l.trace_id AND n.pid = l.pid AND n.step_index = l.step_index AND n.group_name = l.group_name
LEFT JOIN computing k ON k.trace_id = l.trace_id AND k.pid = l.pid AND k.step_index = l.step_index
JOIN (SELECT DISTINCT trace_id, pid, run_id, rank FROM collectives) c ON c.trace_id = l.trace_id AND c.pid = l.pid
LEFT JOIN process_groups g ON g.run_id = c.run_id AND g.group_name = l.group_name;

-- comm_overlap_groups: per run and process group, over the steady steps (steady_steps)
-- of all its ranks: the mean communication, overlapped and exposed time per step and
-- rank, the exposed share of the step, and the rank whose steps it exposed most. The
-- group with the most exposed time is the one to work on (finding_exposed_communication).
--
-- depends: comm_overlap, steady_steps, process_groups
--
-- @column run_id               Distributed run.
-- @column group_name           Process group.
-- @column group_desc           Its description (NULL when not recorded).
-- @column role                 process_groups.role.
-- @column role_basis           process_groups.role_basis.
-- @column framework            process_groups.framework.
-- @column group_size           Ranks in the group.
-- @column ranks                Ranks with steps in the lake.
-- @column steps                Steady steps over all ranks (rank-steps).
-- @column communication_ns     Mean communication per step and rank (ns).
-- @column overlapped_ns        Mean overlapped part (ns).
-- @column exposed_ns           Mean exposed part (ns).
-- @column exposed_pct          Mean exposed share of the step (per cent).
-- @column overlap_pct          overlapped_ns / communication_ns x 100.
-- @column worst_rank           Rank with the largest mean exposed time (the lowest of those as large).
-- @column worst_rank_exposed_ns Its mean exposed time per step (ns).
CREATE OR REPLACE VIEW comm_overlap_groups AS
WITH steady AS (
    SELECT o.* FROM comm_overlap o
    JOIN steady_steps s USING (trace_id, pid, step_index)
),
per_rank AS (
    SELECT run_id, group_name, rank, avg(exposed_ns) AS exposed_ns FROM steady GROUP BY ALL
),
worst AS (
    -- ties (ranks whose communication is all hidden, 0 exposed) go to the lowest rank
    SELECT run_id, group_name, arg_min(rank, (-exposed_ns, rank)) AS worst_rank, max(exposed_ns) AS worst_rank_exposed_ns
    FROM per_rank GROUP BY ALL
)
SELECT s.run_id, s.group_name, any_value(g.group_desc) AS group_desc, any_value(g.role) AS role,
       any_value(g.role_basis) AS role_basis, any_value(g.framework) AS framework,
       any_value(g.group_size) AS group_size, count(DISTINCT s.rank) AS ranks, count(*) AS steps,
       CAST(avg(s.communication_ns) AS BIGINT) AS communication_ns,
       CAST(avg(s.overlapped_ns) AS BIGINT) AS overlapped_ns,
       CAST(avg(s.exposed_ns) AS BIGINT) AS exposed_ns, avg(s.exposed_pct) AS exposed_pct,
       100.0 * sum(s.overlapped_ns) / nullif(sum(s.communication_ns), 0) AS overlap_pct,
       any_value(w.worst_rank) AS worst_rank, CAST(any_value(w.worst_rank_exposed_ns) AS BIGINT) AS worst_rank_exposed_ns
FROM steady s
JOIN worst w USING (run_id, group_name)
LEFT JOIN process_groups g USING (run_id, group_name)
GROUP BY s.run_id, s.group_name;
