-- kernel_launches: each kernel with the API call that launched it: how long the CPU
-- spent launching, how long the kernel waited before it started, and how many
-- kernels were queued ahead of it on its stream. One row per kernel whose launch
-- call is in the trace. A kernel run by a CUDA graph replay has the graph launch call
-- (cudaGraphLaunch) as its launch: one call for all the kernels of the replay, so its
-- host cost per kernel is launch_ns / replay_kernels.
--
-- depends: kernels, api, graph_launches, gpu_op_phases
-- materialize: per trace
--
-- @column trace_id           Trace.
-- @column pid                Process.
-- @column tid                Launching thread.
-- @column device_id          GPU.
-- @column stream_id          Stream.
-- @column name               Kernel name.
-- @column api_name           Launch call (cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel...).
-- @column launch_start_ns    Start of the launch call (ns).
-- @column launch_ns          Duration of the launch call on the CPU (ns).
-- @column start_ns           Kernel start (ns).
-- @column duration_ns        Kernel duration (ns).
-- @column launch_latency_ns  start_ns - launch_start_ns: from the call to the kernel start.
-- @column queue_delay_ns     Time from the end of the launch call to the kernel start
--                            (NULL when the kernel started before the call returned).
-- @column queue_depth        Kernels launched earlier on the same stream that had not
--                            started yet when this one was launched.
-- @column is_graph           True when a graph replay ran it (api_name is a graph launch).
-- @column graph_id           CUDA graph id (NULL when not recorded or not graphed).
-- @column replay_kernels     Kernels run by the same launch call (1 for direct launches).
-- @column phase              gpu_op_phases.phase: 'replay', 'capture', 'warmup' or 'eager'.
CREATE OR REPLACE VIEW kernel_launches AS
WITH launched AS (
    SELECT k.trace_id, k.pid, a.tid, k.device_id, k.stream_id, k.name, a.name AS api_name,
           a.start_ns AS launch_start_ns, a.duration_ns AS launch_ns, a.end_ns AS launch_end_ns,
           k.start_ns, k.duration_ns, k.graph_id,
           g.correlation_id IS NOT NULL AS is_graph,
           count(*) OVER (PARTITION BY k.trace_id, k.pid, k.correlation_id) AS replay_kernels,
           row_number() OVER (PARTITION BY k.trace_id, k.pid, k.device_id, k.stream_id
                              ORDER BY a.start_ns, k.start_ns, k.end_ns, k.name) - 1 AS launched_before
    FROM kernels k
    JOIN api a ON a.trace_id = k.trace_id AND a.pid = k.pid AND a.correlation_id = k.correlation_id
    LEFT JOIN graph_launches g ON g.trace_id = k.trace_id AND g.pid = k.pid AND g.correlation_id = k.correlation_id
),
started AS (
    SELECT trace_id, pid, device_id, stream_id, start_ns,
           -- kernels started by then (those that start in the same ns all count)
           count(*) OVER (PARTITION BY trace_id, pid, device_id, stream_id ORDER BY start_ns
                          RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS started_count
    FROM kernels
)
SELECT l.trace_id, l.pid, l.tid, l.device_id, l.stream_id, l.name, l.api_name,
       l.launch_start_ns, l.launch_ns, l.start_ns, l.duration_ns,
       l.start_ns - l.launch_start_ns AS launch_latency_ns,
       CASE WHEN l.start_ns >= l.launch_end_ns THEN l.start_ns - l.launch_end_ns END AS queue_delay_ns,
       greatest(0, l.launched_before - coalesce(s.started_count, 0)) AS queue_depth,
       l.is_graph, l.graph_id, l.replay_kernels, coalesce(p.phase, 'eager') AS phase
FROM launched l
ASOF LEFT JOIN started s
  ON s.trace_id = l.trace_id AND s.pid = l.pid AND s.device_id = l.device_id
 AND s.stream_id = l.stream_id AND s.start_ns < l.launch_start_ns
LEFT JOIN (SELECT trace_id, pid, device_id, stream_id, start_ns, any_value(phase) AS phase
           FROM gpu_op_phases WHERE category = 'kernel' GROUP BY ALL) p
  ON p.trace_id = l.trace_id AND p.pid = l.pid AND p.device_id = l.device_id AND p.stream_id = l.stream_id
 AND p.start_ns = l.start_ns;

-- kernel_launch_summary: per process and GPU: launch overhead and the share of short
-- kernels. Many directly launched kernels shorter than their own launch call mean the
-- GPU waits on the CPU (launch-bound); CUDA graphs or fused/bigger kernels help. Kernels
-- run by graph replays are counted apart (one launch call runs all of a replay), and so
-- is one-time work: the short-kernel shares count the directly launched kernels of the
-- steady work only (phase 'eager'), not warm-up or graph capture.
--
-- @column kernels               Kernels with a known launch call.
-- @column launches              Launch calls (a graph replay is one).
-- @column graphed_kernels       Kernels run by graph replays.
-- @column graphed_kernel_pct    graphed_kernels, % of kernels.
-- @column eager_kernels         Directly launched kernels of the steady work (phase 'eager').
-- @column graphed_time_pct      Time of graph replays (their kernels, or the replays nsys
--                               traced as a whole), % of that plus the eager kernels' time.
-- @column avg_launch_ns         Mean duration of the launch calls (ns).
-- @column avg_launch_latency_ns Mean launch_latency_ns.
-- @column p50_kernel_ns         Median kernel duration (ns).
-- @column short_kernel_pct      Eager kernels that ran shorter than their launch call, % of
--                               the eager kernels (NULL when there are none).
-- @column short_kernel_time_pct Their share of the eager kernels' time, %.
-- @column avg_queue_depth       Mean queue_depth.
CREATE OR REPLACE VIEW kernel_launch_summary AS
WITH calls AS (
    SELECT trace_id, pid, device_id, launch_start_ns, any_value(launch_ns) AS launch_ns
    FROM kernel_launches
    GROUP BY trace_id, pid, device_id, tid, launch_start_ns, api_name
),
call_stats AS (
    SELECT trace_id, pid, device_id, count(*) AS launches, avg(launch_ns) AS avg_launch_ns
    FROM calls GROUP BY ALL
),
whole_replays AS (
    -- replays nsys traced as a whole (graph-level tracing) have no kernel rows
    SELECT trace_id, pid, device_id, sum(duration_ns) AS ns
    FROM gpu_ops WHERE category = 'graph' GROUP BY ALL
)
SELECT k.trace_id, k.pid, k.device_id,
       count(*) AS kernels,
       any_value(c.launches) AS launches,
       count(*) FILTER (WHERE k.is_graph) AS graphed_kernels,
       100.0 * count(*) FILTER (WHERE k.is_graph) / count(*) AS graphed_kernel_pct,
       any_value(c.avg_launch_ns) AS avg_launch_ns,
       avg(k.launch_latency_ns) AS avg_launch_latency_ns,
       median(k.duration_ns) AS p50_kernel_ns,
       count(*) FILTER (WHERE k.phase = 'eager') AS eager_kernels,
       100.0 * (coalesce(sum(k.duration_ns) FILTER (WHERE k.is_graph), 0) + coalesce(any_value(w.ns), 0))
           / nullif(coalesce(sum(k.duration_ns) FILTER (WHERE k.is_graph OR k.phase = 'eager'), 0)
                    + coalesce(any_value(w.ns), 0), 0) AS graphed_time_pct,
       100.0 * count(*) FILTER (WHERE k.phase = 'eager' AND k.duration_ns < k.launch_ns)
           / nullif(count(*) FILTER (WHERE k.phase = 'eager'), 0) AS short_kernel_pct,
       100.0 * coalesce(sum(k.duration_ns) FILTER (WHERE k.phase = 'eager' AND k.duration_ns < k.launch_ns), 0)
           / nullif(sum(k.duration_ns) FILTER (WHERE k.phase = 'eager'), 0) AS short_kernel_time_pct,
       avg(k.queue_depth) AS avg_queue_depth
FROM kernel_launches k
JOIN call_stats c USING (trace_id, pid, device_id)
LEFT JOIN whole_replays w USING (trace_id, pid, device_id)
GROUP BY k.trace_id, k.pid, k.device_id;
