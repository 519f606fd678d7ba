-- critical_path_steps: the steps the critical path is told by: those of the steps view,
-- one row per step, so that the critical path's rows join the other views' steps. The
-- graph (cp_steps) is built at ingest per ProfilerStep#N / step N range (step rule
-- 'profiler_step'), else as one '(trace)' step. Where steps found the same ranges, each
-- step is its graph's step (is_cut false). Where they come from another rule
-- (periodicity, record_function, a serving engine's iterations) or the graph is the
-- '(trace)' step, the path of the graph's steps (of the same process, or '(trace)') is cut
-- at the steps' boundaries (critical_path_cut; is_cut true): each step gets the part of
-- the path that lies in its window, and the path outside every step (start-up, warm-up
-- before a periodic run, the time between numbered iterations) counts for none. A trace
-- without steps keeps its '(trace)' step.
--
-- depends: cp_steps, steps
--
-- @column trace_id         Trace.
-- @column pid              Process of the step (NULL for the '(trace)' step).
-- @column step             Step name, as in steps ('(trace)' when the trace has no steps).
-- @column step_index       Order of the step in its process (0 = first), as in steps.
-- @column start_ns         Start of the step's window (ns): the graph's step range, or for a cut
--                          step the steps view's start_ns.
-- @column end_ns           End of the step's window (ns).
-- @column step_id          cp_steps.step_id of the graph's step (NULL for a cut step).
-- @column is_cut           True when the step is a window cut out of its graph's path.
-- @column has_sync_events  The trace records GPU synchronizations (cp_steps.has_sync_events).
-- @column path_ok          A path was computed (for a cut step: for some graph step of the trace).
CREATE OR REPLACE VIEW critical_path_steps AS
WITH graphs AS (
    SELECT trace_id, bool_or(pid IS NULL) AS whole, bool_or(has_sync_events) AS has_sync_events,
           bool_or(path_ok) AS path_ok
    FROM cp_steps GROUP BY ALL
),
cut AS (  -- traces whose steps are not their graph's steps
    SELECT s.trace_id FROM steps s JOIN graphs g USING (trace_id)
    GROUP BY s.trace_id
    HAVING bool_or(g.whole) OR bool_or(s.step_rule <> 'profiler_step')
)
SELECT trace_id, pid, step, step_index, start_ns, end_ns, step_id, FALSE AS is_cut, has_sync_events, path_ok
FROM cp_steps ANTI JOIN cut USING (trace_id)
UNION ALL
SELECT s.trace_id, s.pid, s.step, s.step_index, s.start_ns, s.end_ns, NULL AS step_id, TRUE AS is_cut,
       g.has_sync_events, g.path_ok
FROM steps s SEMI JOIN cut USING (trace_id) JOIN graphs g USING (trace_id);

-- critical_path_cut(tbl): edges of critical paths cut at the steps' boundaries: the rows of
-- tbl (trace_id; graph_pid, the process of the edge's graph step, NULL for '(trace)';
-- lo_ns <= hi_ns, the edge's span; weight_ns; any other columns, passed through) with one
-- row per cut step of critical_path_steps (same trace and process) whose window the edge
-- overlaps. An edge that spans a boundary is split in proportion to its time on each side
-- (of weight w over [lo, hi]: the part up to t weighs floor(w x (t - lo) / (hi - lo)), so
-- the parts of an edge add up to w exactly); an edge of no duration goes whole to the step
-- that holds it. Path edges follow one another in time, so a step's parts are the path's
-- time inside its window, and the steps' parts add up to the path inside their windows.
-- Adds pid, step, step_index (the step's), start_ns and end_ns (the edge's span clipped to
-- the window); weight_ns is the part's. critical_path reads it for the measured path, the
-- what-if (analysis/critpath_whatif.py) for its re-runs.
CREATE OR REPLACE MACRO critical_path_cut(tbl) AS TABLE
WITH e AS (
    SELECT *, greatest(hi_ns, lo_ns + 1) AS cut_hi_ns FROM query_table(tbl)
)
SELECT e.* EXCLUDE (weight_ns, cut_hi_ns), w.pid, w.step, w.step_index,
       greatest(e.lo_ns, w.start_ns) AS start_ns, least(e.hi_ns, w.end_ns) AS end_ns,
       CAST(CAST(e.weight_ns AS HUGEINT) * (least(e.cut_hi_ns, w.end_ns) - e.lo_ns) // (e.cut_hi_ns - e.lo_ns)
            - CAST(e.weight_ns AS HUGEINT) * (greatest(e.lo_ns, w.start_ns) - e.lo_ns) // (e.cut_hi_ns - e.lo_ns)
            AS BIGINT) AS weight_ns
FROM e
JOIN critical_path_steps w ON w.is_cut AND w.trace_id = e.trace_id AND (e.graph_pid IS NULL OR w.pid = e.graph_pid)
                          AND e.lo_ns < w.end_ns AND e.cut_hi_ns > w.start_ns;

-- _critical_path_cut_edges: the measured paths of the cut steps (critical_path_steps): the
-- path edges of cp_edges cut by critical_path_cut, path_order counted again from 0 in each step.
--
-- depends: cp_edges, cp_nodes, cp_steps, critical_path_steps
--
-- @column event_id  Event the edge's time is attributed to (cp_edges.event_id).
CREATE OR REPLACE VIEW _critical_path_cut_edges AS
WITH path AS (
    SELECT e.trace_id, g.pid AS graph_pid, e.step_id AS graph_step_id, e.path_order AS graph_order, e.edge_type,
           e.class, e.weight_ns, e.event_id, least(a.ts_ns, b.ts_ns) AS lo_ns, greatest(a.ts_ns, b.ts_ns) AS hi_ns
    FROM cp_edges e
    JOIN cp_steps g ON g.trace_id = e.trace_id AND g.step_id = e.step_id
    JOIN cp_nodes a ON a.trace_id = e.trace_id AND a.node_id = e.src_node
    JOIN cp_nodes b ON b.trace_id = e.trace_id AND b.node_id = e.dst_node
    WHERE e.path_order IS NOT NULL
      AND e.trace_id IN (SELECT trace_id FROM critical_path_steps WHERE is_cut)
)
SELECT trace_id, pid, step, step_index,
       row_number() OVER (PARTITION BY trace_id, pid, step_index ORDER BY graph_step_id, graph_order) - 1
           AS path_order,
       edge_type, class, weight_ns, event_id, start_ns, end_ns
FROM critical_path_cut(path);

-- critical_path: what bounds each step: the edges of the longest path through the step's
-- dependency graph (Holistic Trace Analysis' critical path), in order, each attributed to
-- an event and a class. The graph (nodes cp_nodes, edges cp_edges) and the path are built
-- at ingest by analysis/critpath_build.py; see docs/sql.md for the edge types. The steps
-- are those of critical_path_steps (the steps view's): where they are not the graph's
-- steps, the rows of a step are the parts of the path's edges inside its window
-- (critical_path_cut).
--
-- depends: cp_edges, cp_nodes, cp_steps, traces, critical_path_steps, _critical_path_cut_edges
-- materialize: per trace: critical_path_summary, critical_path_ops
--
-- @column trace_id     Trace.
-- @column rank         Distributed rank (NULL when unknown).
-- @column pid          Process of the step.
-- @column step         Step name, as in steps ('(trace)' when the trace has no steps).
-- @column step_index   Order of the step in its process (0 = first), as in steps.
-- @column path_order   Position on the step's path (0 = first edge).
-- @column edge_type    'operator' (CPU span or GPU operation time), 'dependency', 'launch',
--                      'kernel_kernel', 'sync' (GPU end -> waiting CPU call end), 'gpu_sync'.
-- @column class        'cpu', 'data_loading', 'launch_overhead', 'kernel_to_kernel', 'gpu_compute',
--                      'communication', 'memcpy', 'sync_wait'; NULL for zero-weight dependencies.
-- @column weight_ns    Time the edge adds to the path (ns; of a cut edge, its part in the step).
-- @column start_ns     Time of the edge's first node (ns; of a cut edge, clipped to the step).
-- @column end_ns       Time of its last node (ns; clipped likewise).
-- @column event_kind   Kind of the attributed event: 'cpu_op', 'call', 'nvtx', 'kernel',
--                      'memcpy', 'memset' (NULL for dependencies).
-- @column name         Name of the attributed event.
-- @column tid          Thread of the attributed CPU event.
-- @column device_id    GPU of the attributed GPU event.
-- @column stream_id    Stream of the attributed GPU event.
CREATE OR REPLACE VIEW critical_path AS
WITH edges AS (
    SELECT s.trace_id, s.pid, s.step, s.step_index, e.path_order, e.edge_type, e.class, e.weight_ns,
           a.ts_ns AS start_ns, b.ts_ns AS end_ns, e.event_id
    FROM cp_edges e
    JOIN critical_path_steps s ON s.trace_id = e.trace_id AND s.step_id = e.step_id
    JOIN cp_nodes a ON a.trace_id = e.trace_id AND a.node_id = e.src_node
    JOIN cp_nodes b ON b.trace_id = e.trace_id AND b.node_id = e.dst_node
    WHERE e.path_order IS NOT NULL
    UNION ALL
    SELECT trace_id, pid, step, step_index, path_order, edge_type, class, weight_ns, start_ns, end_ns, event_id
    FROM _critical_path_cut_edges
)
SELECT e.trace_id, t.rank, e.pid, e.step, e.step_index, e.path_order, e.edge_type, e.class, e.weight_ns,
       e.start_ns, e.end_ns, n.kind AS event_kind, n.name, n.tid, n.device_id, n.stream_id
FROM edges e
JOIN traces t ON t.trace_id = e.trace_id
LEFT JOIN cp_nodes n ON n.trace_id = e.trace_id AND n.node_id = 2 * e.event_id;

-- critical_path_summary: one row per trace, rank and step: how long the step's critical
-- path is and how its time splits by class; bound_by names the class with the most time.
-- The path can be shorter than the step range, which also covers profiler and host
-- bookkeeping between steps that nothing waits on. The steps are those of the steps view
-- (critical_path_steps): where the graph was built for other steps (a '(trace)' step, one
-- ProfilerStep holding the periods), a step's path is the part of the graph's path inside
-- its window (critical_path_cut), so the classes still add up to path_ns.
--
-- depends: cp_edges, cp_steps, cp_nodes, traces, steps, critical_path_steps, _critical_path_cut_edges
--
-- @column trace_id             Trace.
-- @column rank                 Distributed rank (NULL when unknown).
-- @column pid                  Process of the step.
-- @column step                 Step name, as in steps ('(trace)' when the trace has no steps).
-- @column step_index           Order of the step in its process (0 = first), as in steps.
-- @column step_ns              Length of the step: steps.wall_ns (GPU-defined where the host runs
--                              ahead), else the step range (ns).
-- @column path_ns              Length of the critical path (ns; of a cut step, the path's time in
--                              its window); = the sum of the *_ns classes.
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
WITH path AS (
    -- the path edges of each step: its graph's, or its part of the cut path
    SELECT s.trace_id, s.pid, s.step_index, e.edge_type, e.class, e.weight_ns, e.event_id
    FROM cp_edges e
    JOIN critical_path_steps s ON s.trace_id = e.trace_id AND s.step_id = e.step_id
    WHERE e.path_order IS NOT NULL
    UNION ALL
    SELECT trace_id, pid, step_index, edge_type, class, weight_ns, event_id FROM _critical_path_cut_edges
),
by_class AS (
    SELECT trace_id, pid, step_index, CAST(sum(weight_ns) AS BIGINT) AS path_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'cpu'), 0) AS BIGINT) AS cpu_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'data_loading'), 0) AS BIGINT) AS data_loading_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'launch_overhead'), 0) AS BIGINT) AS launch_overhead_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'kernel_to_kernel'), 0) AS BIGINT) AS kernel_to_kernel_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'gpu_compute'), 0) AS BIGINT) AS gpu_compute_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'communication'), 0) AS BIGINT) AS communication_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'memcpy'), 0) AS BIGINT) AS memcpy_ns,
           CAST(coalesce(sum(weight_ns) FILTER (WHERE class = 'sync_wait'), 0) AS BIGINT) AS sync_wait_ns
    FROM path
    GROUP BY ALL
),
blocked AS (
    -- the path's host time inside a call that waits: for the GPU (a sync call, or a copy to the
    -- host: the copy op of the same correlation id runs Device-to-Host) or for a copy
    SELECT e.trace_id, e.pid, e.step_index,
           CAST(sum(e.weight_ns) FILTER (WHERE regexp_matches(n.name, '^cu(da)?(Device|Stream|Event|Ctx)Synchronize')
                                          OR regexp_matches(coalesce(o.name, ''), 'DtoH|Device-to-Host')) AS BIGINT)
               AS blocked_sync_ns,
           CAST(sum(e.weight_ns) FILTER (WHERE regexp_matches(n.name, '^cu(da)?Memcpy')
                                          AND NOT regexp_matches(coalesce(o.name, ''), 'DtoH|Device-to-Host')) AS BIGINT)
               AS blocked_copy_ns
    FROM path e
    JOIN cp_nodes n ON n.trace_id = e.trace_id AND n.node_id = 2 * e.event_id
    LEFT JOIN cp_nodes o ON o.trace_id = n.trace_id AND o.is_start AND o.kind = 'memcpy'
                        AND o.correlation_id = n.correlation_id AND o.pid IS NOT DISTINCT FROM n.pid
    WHERE e.class = 'cpu' AND e.edge_type = 'operator' AND n.kind = 'call'
      AND regexp_matches(n.name, '^cu(da)?((Device|Stream|Event|Ctx)Synchronize|Memcpy)')
    GROUP BY ALL
),
reported AS (
    -- path_ns: the graph step's path, or the sum of the cut step's parts
    SELECT s.*, coalesce(g.path_ns, c.path_ns, 0) AS path_ns
    FROM critical_path_steps s
    LEFT JOIN cp_steps g ON g.trace_id = s.trace_id AND g.step_id = s.step_id
    LEFT JOIN by_class c ON s.is_cut AND c.trace_id = s.trace_id AND c.pid = s.pid AND c.step_index = s.step_index
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
FROM reported s
JOIN traces t ON t.trace_id = s.trace_id
LEFT JOIN by_class c ON c.trace_id = s.trace_id AND c.pid IS NOT DISTINCT FROM s.pid AND c.step_index = s.step_index
LEFT JOIN blocked b ON b.trace_id = s.trace_id AND b.pid IS NOT DISTINCT FROM s.pid AND b.step_index = s.step_index
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
-- @column step          Step name, as in steps (see critical_path_summary).
-- @column step_index    Order of the step in its process, as in steps.
-- @column event_kind    'cpu_op', 'call', 'nvtx', 'kernel', 'memcpy' or 'memset'.
-- @column name          Operator, call or GPU operation name.
-- @column class         Attribution class of the time (see critical_path).
-- @column path_ns       Time it puts on the path (ns).
-- @column edges         Path edges attributed to it (of a cut path, the parts in the step).
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
