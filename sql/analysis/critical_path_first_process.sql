-- critical_path_first_steps: critical_path_summary for the trace's first process only
-- (the lowest pid; the trace page shows one process's steps). One row per step.
--
-- depends: critical_path_summary, critical_path_ops, step_phases
--
-- @column trace_id            Trace.
-- @column rank                Distributed rank (NULL when unknown).
-- @column pid                 Process of the step.
-- @column step                Step name, as in steps ('(trace)' when the trace has no steps).
-- @column step_index          Order of the step in its process (0 = first).
-- @column step_ns             Length of the step (critical_path_summary.step_ns).
-- @column path_ns             Length of the critical path (ns); = the sum of the *_ns classes.
-- @column cpu_ns              CPU operator and API-call time on the path (ns).
-- @column data_loading_ns     DataLoader operators and data-loading ranges on the path (ns).
-- @column launch_overhead_ns  Launch call start -> GPU operation start, idle stream (ns).
-- @column kernel_to_kernel_ns Gaps between queued operations on a stream (ns).
-- @column gpu_compute_ns      Compute kernels (ns).
-- @column communication_ns    Communication (NCCL/RCCL) kernels (ns).
-- @column memcpy_ns           Memcpy and memset (ns).
-- @column sync_wait_ns        GPU operation end -> the waiting CPU call's return (ns).
-- @column blocked_sync_ns     Of cpu_ns, the host's time inside calls that wait for the GPU (ns).
-- @column blocked_copy_ns     Of cpu_ns, the host's time inside other copy calls (ns).
-- @column bound_by            What bounds the step (critical_path_summary.bound_by).
-- @column path_pct_of_step    path_ns / step_ns x 100.
-- @column is_lower_bound      True when the trace has no GPU synchronization events: CPU
--                             waits on the GPU are unseen, so the path may be longer.
CREATE OR REPLACE VIEW critical_path_first_steps AS
SELECT * FROM critical_path_summary
QUALIFY pid IS NOT DISTINCT FROM min(pid) OVER (PARTITION BY trace_id);

-- critical_path_first_ops: what puts the most time on the critical paths of the trace's
-- first process over its steady steps (critical_path_ops summed over the steps that
-- step_phases calls steady: warm-up steps, whose paths hold one-time work such as loading
-- libraries, are left out). One row per trace and (event kind, name, class).
--
-- @column event_kind Kind of the attributed event: 'cpu_op', 'call', 'nvtx', 'kernel',
--                 'memcpy', 'memset' (NULL for dependencies).
-- @column name    Name of the attributed event.
-- @column class   'cpu', 'data_loading', 'launch_overhead', 'kernel_to_kernel', 'gpu_compute',
--                 'communication', 'memcpy', 'sync_wait'; NULL for zero-weight dependencies.
-- @column path_ns  Time it puts on the process's paths, over the steady steps (ns).
-- @column edges    Path edges attributed to it, over the steady steps.
-- @column pct      path_ns / the summed path length of the process's steady steps x 100.
CREATE OR REPLACE VIEW critical_path_first_ops AS
WITH steady AS (  -- a step without a phase (no steps: the whole trace is one '(trace)' step) counts
    SELECT s.trace_id, s.pid, s.step_index, s.path_ns
    FROM critical_path_first_steps s
    LEFT JOIN step_phases p ON p.trace_id = s.trace_id AND p.pid = s.pid AND p.step_index = s.step_index
    WHERE coalesce(p.phase, 'steady') = 'steady'
),
total AS (
    SELECT trace_id, any_value(pid) AS pid, sum(path_ns) AS path_ns FROM steady GROUP BY trace_id
)
SELECT o.trace_id, o.event_kind, o.name, o.class, CAST(sum(o.path_ns) AS BIGINT) AS path_ns,
       CAST(sum(o.edges) AS BIGINT) AS edges, 100.0 * sum(o.path_ns) / any_value(t.path_ns) AS pct
FROM critical_path_ops o
JOIN total t ON t.trace_id = o.trace_id AND o.pid IS NOT DISTINCT FROM t.pid
SEMI JOIN steady s ON s.trace_id = o.trace_id AND s.step_index = o.step_index
GROUP BY o.trace_id, o.event_kind, o.name, o.class;
