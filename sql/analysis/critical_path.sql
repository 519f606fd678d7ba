-- critical_path: what bounds each step: the edges of the longest path through the step's
-- dependency graph (Holistic Trace Analysis' critical path), in order, each attributed to
-- an event and a class. The graph (nodes cp_nodes, edges cp_edges) and the path are built
-- at ingest by analysis/critpath_build.py; see docs/sql.md for the edge types.
--
-- depends: cp_edges, cp_nodes, cp_steps, traces
-- materialize: per trace: critical_path_summary, critical_path_ops
--
-- @column trace_id     Trace.
-- @column rank         Distributed rank (NULL when unknown).
-- @column pid          Process of the step.
-- @column step         Step range name (ProfilerStep#N, step N; '(trace)' when none).
-- @column step_index   Order of the step in its process (0 = first).
-- @column path_order   Position on the path (0 = first edge).
-- @column edge_type    'operator' (CPU span or GPU operation time), 'dependency', 'launch',
--                      'kernel_kernel', 'sync' (GPU end -> waiting CPU call end), 'gpu_sync'.
-- @column class        'cpu', 'data_loading', 'launch_overhead', 'kernel_to_kernel', 'gpu_compute',
--                      'communication', 'memcpy', 'sync_wait'; NULL for zero-weight dependencies.
-- @column weight_ns    Time the edge adds to the path (ns).
-- @column start_ns     Time of the edge's first node (ns).
-- @column end_ns       Time of its last node (ns).
-- @column event_kind   Kind of the attributed event: 'cpu_op', 'call', 'nvtx', 'kernel',
--                      'memcpy', 'memset' (NULL for dependencies).
-- @column name         Name of the attributed event.
-- @column tid          Thread of the attributed CPU event.
-- @column device_id    GPU of the attributed GPU event.
-- @column stream_id    Stream of the attributed GPU event.
CREATE OR REPLACE VIEW critical_path AS
SELECT s.trace_id, t.rank, s.pid, s.step, s.step_index, e.path_order, e.edge_type, e.class, e.weight_ns,
       a.ts_ns AS start_ns, b.ts_ns AS end_ns, n.kind AS event_kind, n.name, n.tid, n.device_id, n.stream_id
FROM cp_edges e
JOIN cp_steps s ON s.trace_id = e.trace_id AND s.step_id = e.step_id
JOIN traces t ON t.trace_id = e.trace_id
JOIN cp_nodes a ON a.trace_id = e.trace_id AND a.node_id = e.src_node
JOIN cp_nodes b ON b.trace_id = e.trace_id AND b.node_id = e.dst_node
LEFT JOIN cp_nodes n ON n.trace_id = e.trace_id AND n.node_id = 2 * e.event_id
WHERE e.path_order IS NOT NULL;

-- critical_path_summary: one row per trace, rank and step: how long the step's critical
-- path is and how its time splits by class; bound_by names the class with the most time.
-- The path can be shorter than the step range, which also covers profiler and host
-- bookkeeping between steps that nothing waits on.
--
-- depends: cp_edges, cp_steps, cp_nodes, traces, steps
--
-- @column trace_id             Trace.
-- @column rank                 Distributed rank (NULL when unknown).
-- @column pid                  Process of the step.
-- @column step                 Step range name.
-- @column step_index           Order of the step in its process (0 = first).
-- @column step_ns              Length of the step: steps.wall_ns (GPU-defined where the host runs
--                              ahead), else the step range (ns).
-- @column path_ns              Length of the critical path (ns); = the sum of the *_ns classes.
-- @column cpu_ns               CPU operator and API-call time on the path (ns).
-- @column data_loading_ns      DataLoader operators and data-loading ranges on the path (ns).
-- @column launch_overhead_ns   Launch call start -> GPU operation start, idle stream (ns).
-- @column kernel_to_kernel_ns  Gaps between queued operations on a stream (ns).
-- @column gpu_compute_ns       Compute kernels (ns).
-- @column communication_ns     Communication (NCCL/RCCL) kernels (ns).
-- @column memcpy_ns            Memcpy and memset (ns).
-- @column sync_wait_ns         GPU operation end -> the waiting CPU call's return (ns).
-- @column blocked_sync_ns      Of cpu_ns, the host's time inside calls that wait for the GPU
--                              (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize,
--                              the driver's, and copies to the host as in .item()) (ns).
-- @column blocked_copy_ns      Of cpu_ns, the host's time inside other copy calls (a copy from
--                              pageable memory blocks the host until it is done) (ns).
-- @column bound_by             What bounds the step: the class with the most time on the path,
--                              the host's time inside waiting calls counted as 'sync_wait'
--                              (blocked_sync_ns) and 'memcpy' (blocked_copy_ns), not as 'cpu'.
-- @column path_pct_of_step     path_ns / step_ns x 100.
-- @column is_lower_bound       True when the trace has no GPU synchronization events: CPU
--                              waits on the GPU are unseen, so the path may be longer.
CREATE OR REPLACE VIEW critical_path_summary AS
WITH by_class AS (
    SELECT trace_id, step_id,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'cpu'), 0) AS BIGINT) AS cpu_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'data_loading'), 0) AS BIGINT) AS data_loading_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'launch_overhead'), 0) AS BIGINT) AS launch_overhead_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'kernel_to_kernel'), 0) AS BIGINT) AS kernel_to_kernel_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'gpu_compute'), 0) AS BIGINT) AS gpu_compute_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'communication'), 0) AS BIGINT) AS communication_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'memcpy'), 0) AS BIGINT) AS memcpy_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'sync_wait'), 0) AS BIGINT) AS sync_wait_ns
    FROM cp_edges
    WHERE path_order IS NOT NULL
    GROUP BY ALL
),
blocked AS (
    -- the path's host time inside a call that waits: for the GPU (a sync call, or a copy to the
    -- host: the copy op of the same correlation id runs Device-to-Host) or for a copy
    SELECT e.trace_id, e.step_id,
           CAST(sum(e.weight_ns) FILTER (WHERE regexp_matches(n.name, '^cu(da)?(Device|Stream|Event|Ctx)Synchronize')
                                          OR regexp_matches(coalesce(o.name, ''), 'DtoH|Device-to-Host')) AS BIGINT)
               AS blocked_sync_ns,
           CAST(sum(e.weight_ns) FILTER (WHERE regexp_matches(n.name, '^cu(da)?Memcpy')
                                          AND NOT regexp_matches(coalesce(o.name, ''), 'DtoH|Device-to-Host')) AS BIGINT)
               AS blocked_copy_ns
    FROM cp_edges e
    JOIN cp_nodes n ON n.trace_id = e.trace_id AND n.node_id = 2 * e.event_id
    LEFT JOIN cp_nodes o ON o.trace_id = n.trace_id AND o.is_start AND o.kind = 'memcpy'
                        AND o.correlation_id = n.correlation_id AND o.pid IS NOT DISTINCT FROM n.pid
    WHERE e.path_order IS NOT NULL AND e.class = 'cpu' AND e.edge_type = 'operator' AND n.kind = 'call'
      AND regexp_matches(n.name, '^cu(da)?((Device|Stream|Event|Ctx)Synchronize|Memcpy)')
    GROUP BY ALL
)
SELECT s.trace_id, t.rank, s.pid, s.step, s.step_index, coalesce(w.wall_ns, s.end_ns - s.start_ns) AS step_ns,
       s.path_ns,
       coalesce(c.cpu_ns, 0) AS cpu_ns, coalesce(c.data_loading_ns, 0) AS data_loading_ns,
       coalesce(c.launch_overhead_ns, 0) AS launch_overhead_ns,
       coalesce(c.kernel_to_kernel_ns, 0) AS kernel_to_kernel_ns, coalesce(c.gpu_compute_ns, 0) AS gpu_compute_ns,
       coalesce(c.communication_ns, 0) AS communication_ns, coalesce(c.memcpy_ns, 0) AS memcpy_ns,
       coalesce(c.sync_wait_ns, 0) AS sync_wait_ns,
       coalesce(b.blocked_sync_ns, 0) AS blocked_sync_ns, coalesce(b.blocked_copy_ns, 0) AS blocked_copy_ns,
       CASE WHEN s.path_ns > 0 THEN
           [x.k FOR x IN list_sort([{'ns': c.cpu_ns - coalesce(b.blocked_sync_ns, 0) - coalesce(b.blocked_copy_ns, 0),
                                     'k': 'cpu'},
                                    {'ns': c.data_loading_ns, 'k': 'data_loading'},
                                    {'ns': c.launch_overhead_ns, 'k': 'launch_overhead'},
                                    {'ns': c.kernel_to_kernel_ns, 'k': 'kernel_to_kernel'},
                                    {'ns': c.gpu_compute_ns, 'k': 'gpu_compute'},
                                    {'ns': c.communication_ns, 'k': 'communication'},
                                    {'ns': c.memcpy_ns + coalesce(b.blocked_copy_ns, 0), 'k': 'memcpy'},
                                    {'ns': c.sync_wait_ns + coalesce(b.blocked_sync_ns, 0), 'k': 'sync_wait'}],
                                   'DESC')][1]
       END AS bound_by,
       100.0 * s.path_ns / nullif(coalesce(w.wall_ns, s.end_ns - s.start_ns), 0) AS path_pct_of_step,
       NOT s.has_sync_events AS is_lower_bound
FROM cp_steps s
JOIN traces t ON t.trace_id = s.trace_id
LEFT JOIN by_class c ON c.trace_id = s.trace_id AND c.step_id = s.step_id
LEFT JOIN blocked b ON b.trace_id = s.trace_id AND b.step_id = s.step_id
LEFT JOIN steps w ON w.trace_id = s.trace_id AND w.pid = s.pid AND w.step = s.step AND w.step_index = s.step_index
WHERE s.path_ok;

-- critical_path_ops: the operators, API calls and GPU operations that put the most time on
-- each step's critical path (the companion of critical_path_summary). One row per step and
-- (event kind, name, class), ranked within the step.
--
-- depends: critical_path
--
-- @column trace_id      Trace.
-- @column rank          Distributed rank (NULL when unknown).
-- @column pid           Process of the step.
-- @column step          Step range name.
-- @column step_index    Order of the step in its process.
-- @column event_kind    'cpu_op', 'call', 'nvtx', 'kernel', 'memcpy' or 'memset'.
-- @column name          Operator, call or GPU operation name.
-- @column class         Attribution class of the time (see critical_path).
-- @column path_ns       Time it puts on the path (ns).
-- @column edges         Path edges attributed to it.
-- @column pct_of_path   path_ns / the step's path length x 100.
-- @column rank_in_step  1 = the largest contributor of the step; equal path_ns go by name, then
--                       event_kind, then class (an operation can be on the path as
--                       'gpu_compute' and as 'kernel_to_kernel' for the same time).
CREATE OR REPLACE VIEW critical_path_ops AS
WITH per AS (
    SELECT trace_id, rank, pid, step, step_index, event_kind, name, class,
           CAST(sum(weight_ns) AS BIGINT) AS path_ns, count(*) AS edges
    FROM critical_path
    WHERE weight_ns > 0 AND name IS NOT NULL
    GROUP BY ALL
)
SELECT *, 100.0 * path_ns / nullif(sum(path_ns) OVER (PARTITION BY trace_id, pid, step_index), 0) AS pct_of_path,
       row_number() OVER (PARTITION BY trace_id, pid, step_index ORDER BY path_ns DESC, name, event_kind, class)
           AS rank_in_step
FROM per;
