-- graph_captures: each CUDA/HIP graph capture: a stream capture (cudaStreamBeginCapture
-- .. cudaStreamEndCapture on one thread), with the kernel launches recorded into it and
-- the capture site: the innermost user Python frame (not under torch/) around the
-- capture call where the trace has Python stacks, else the innermost annotation or
-- NVTX range, else the innermost operator (innermost: the last to start; of those that
-- start in the same ns, the deepest, then the lowest id). One row per capture.
--
-- depends: api, python_frames, annotations, cpu_ops
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column tid              Capturing thread.
-- @column capture_index    Order of the capture in its process (0 = first; by thread when two start together).
-- @column start_ns         Start of the BeginCapture call (ns).
-- @column end_ns           End of the EndCapture call, or of the graph instantiation that
--                          follows it on the thread before the next capture (ns).
-- @column launches         Kernel and copy launch calls made during the capture (they
--                          record graph nodes; nothing runs on the GPU).
-- @column capture_site     Where the capture happened, as above (NULL when nothing recorded).

-- graph_replay_runs: one row per graph replay (a graph launch call) with what it ran.
--
-- depends: graph_launches, graph_ops
--
-- @column correlation_id   Correlation id of the launch call.
-- @column graph_id         CUDA graph id (NULL when the trace does not record it).
-- @column graph_key        graph_id, or a hash of the replay's operation names (graph_ops).
-- @column device_id        GPU (of its first operation; the lowest of those that start together).
-- @column launch_start_ns  Start of the launch call (ns).
-- @column launch_ns        Duration of the launch call on the CPU (ns).
-- @column ops              GPU operations the replay ran (1 when traced as a whole).
-- @column graph_exec_id    Executable graph id (graph-level nsys traces; NULL otherwise).
-- @column kernels          Kernels it ran (NULL when nsys traced the replay as a whole).
-- @column gpu_ns           Sum of the durations of its operations (ns).
-- @column first_start_ns   Start of its first operation (ns).
-- @column last_end_ns      End of its last operation (ns).
-- @column span_ns          last_end_ns - first_start_ns.
-- @column launch_latency_ns first_start_ns - launch_start_ns.

-- graph_replays: per trace, process and graph: how often it was replayed, what one
-- replay runs and costs, and where it was captured. A replay is one launch: its host
-- cost is one launch call however many kernels it runs.
--
-- @column replays            Number of replays (graph launch calls with GPU work).
-- @column kernels_per_replay Kernels per replay (median over replays; NULL when the replays
--                            were traced as a whole).
-- @column ops_per_replay     GPU operations (kernels, copies, memsets) per replay (median).
-- @column gpu_ns_per_replay  Mean summed duration of a replay's operations (ns).
-- @column span_ns_per_replay Mean span of a replay, first start to last end (ns).
-- @column launch_ns          Mean duration of the launch call: the host cost of a replay (ns).
-- @column launch_latency_ns  Mean time from the launch call to the replay's first operation (ns).
-- @column total_gpu_ns       Summed duration of all operations of all replays (ns).
-- @column first_replay_ns    Start of the first replay's launch call (ns).
-- @column capture_site       Capture site of the graph (graph_captures), matched in order
--                            (the n-th graph by id or first replay with the n-th capture of
--                            the process) when the process recorded as many captures as it
--                            replays graphs; NULL otherwise.
CREATE OR REPLACE VIEW graph_captures AS
WITH begins AS (
    SELECT trace_id, pid, tid, start_ns
    FROM api WHERE regexp_matches(name, '^(cuda|cu|hip)StreamBeginCapture')
),
ends AS (
    SELECT trace_id, pid, tid, end_ns
    FROM api WHERE regexp_matches(name, '^(cuda|cu|hip)StreamEndCapture')
),
pairs AS (
    SELECT b.trace_id, b.pid, b.tid, b.start_ns, e.end_ns
    FROM begins b
    ASOF JOIN ends e ON e.trace_id = b.trace_id AND e.pid = b.pid AND e.tid = b.tid AND e.end_ns >= b.start_ns
),
launches AS (
    SELECT p.trace_id, p.pid, p.tid, p.start_ns, count(a.name) AS launches
    FROM pairs p
    LEFT JOIN api a ON a.trace_id = p.trace_id AND a.pid = p.pid AND a.tid = p.tid
                   AND a.start_ns > p.start_ns AND a.end_ns < p.end_ns
                   AND regexp_matches(a.name, 'LaunchKernel|^(cuda|cu|hip)Memcpy|^(cuda|cu|hip)Memset|LaunchCooperative')
    GROUP BY ALL
),
frames AS (
    SELECT p.trace_id, p.pid, p.tid, p.start_ns,
           arg_min(f.name, (-f.start_ns, f.end_ns, f.frame_id)) FILTER (WHERE f.frame_kind = 'python'
               AND NOT regexp_matches(coalesce(f.file, ''), '(^|/)(torch|triton|contextlib|threading)[./]')
               AND f.file IS NOT NULL) AS frame
    FROM pairs p
    JOIN python_frames f ON f.trace_id = p.trace_id AND f.pid = p.pid AND f.tid = p.tid
                        AND f.start_ns <= p.start_ns AND f.end_ns >= p.end_ns
    GROUP BY ALL
),
ranges AS (
    SELECT p.trace_id, p.pid, p.tid, p.start_ns, arg_min(a.name, (-a.start_ns, -a.depth, a.annotation_id)) AS range_name
    FROM pairs p
    JOIN annotations a ON a.trace_id = p.trace_id AND a.pid = p.pid AND a.tid = p.tid AND NOT a.is_gpu
                      AND a.start_ns <= p.start_ns AND coalesce(a.end_ns, p.end_ns) >= p.end_ns
    GROUP BY ALL
),
ops AS (
    SELECT p.trace_id, p.pid, p.tid, p.start_ns, arg_min(c.name, (-c.start_ns, -c.depth, c.op_id)) AS op_name
    FROM pairs p
    JOIN cpu_ops c ON c.trace_id = p.trace_id AND c.pid = p.pid AND c.tid = p.tid
                  AND c.start_ns <= p.start_ns AND c.end_ns >= p.end_ns
    GROUP BY ALL
)
SELECT p.trace_id, p.pid, p.tid,
       row_number() OVER (PARTITION BY p.trace_id, p.pid ORDER BY p.start_ns, p.tid) - 1 AS capture_index,
       p.start_ns, p.end_ns, coalesce(l.launches, 0) AS launches,
       coalesce(f.frame, r.range_name, o.op_name) AS capture_site
FROM pairs p
LEFT JOIN launches l USING (trace_id, pid, tid, start_ns)
LEFT JOIN frames f USING (trace_id, pid, tid, start_ns)
LEFT JOIN ranges r USING (trace_id, pid, tid, start_ns)
LEFT JOIN ops o USING (trace_id, pid, tid, start_ns);

CREATE OR REPLACE VIEW graph_replay_runs AS
SELECT l.trace_id, l.pid, l.tid, l.correlation_id,
       any_value(o.graph_id) AS graph_id, any_value(o.graph_exec_id) AS graph_exec_id,
       any_value(o.graph_key) AS graph_key,
       arg_min(o.device_id, (o.start_ns, o.device_id)) AS device_id,
       l.start_ns AS launch_start_ns, l.launch_ns,
       count(*) AS ops,
       CASE WHEN bool_or(o.category = 'graph') THEN NULL
            ELSE count(*) FILTER (WHERE o.category = 'kernel') END AS kernels,
       CAST(sum(o.duration_ns) AS BIGINT) AS gpu_ns,
       min(o.start_ns) AS first_start_ns, max(o.end_ns) AS last_end_ns,
       max(o.end_ns) - min(o.start_ns) AS span_ns,
       min(o.start_ns) - l.start_ns AS launch_latency_ns
FROM graph_launches l
JOIN graph_ops o ON o.trace_id = l.trace_id AND o.pid = l.pid AND o.correlation_id = l.correlation_id
GROUP BY l.trace_id, l.pid, l.tid, l.correlation_id, l.start_ns, l.launch_ns;

CREATE OR REPLACE VIEW graph_replays AS
WITH per_graph AS (
    SELECT trace_id, pid, graph_key,
           any_value(graph_id) AS graph_id, any_value(graph_exec_id) AS graph_exec_id,
           any_value(device_id) AS device_id,
           count(*) AS replays,
           median(kernels) AS kernels_per_replay,
           median(ops) AS ops_per_replay,
           avg(gpu_ns) AS gpu_ns_per_replay,
           avg(span_ns) AS span_ns_per_replay,
           avg(launch_ns) AS launch_ns,
           avg(launch_latency_ns) AS launch_latency_ns,
           CAST(sum(gpu_ns) AS BIGINT) AS total_gpu_ns,
           min(launch_start_ns) AS first_replay_ns
    FROM graph_replay_runs
    GROUP BY trace_id, pid, graph_key
),
ordered AS (
    SELECT *,
           row_number() OVER (PARTITION BY trace_id, pid ORDER BY graph_id NULLS LAST, first_replay_ns) - 1
               AS graph_index,
           count(*) OVER (PARTITION BY trace_id, pid) AS graphs
    FROM per_graph
),
captures AS (
    SELECT trace_id, pid, capture_index, capture_site, count(*) OVER (PARTITION BY trace_id, pid) AS captures
    FROM graph_captures
)
SELECT o.trace_id, o.pid, o.device_id, o.graph_id, o.graph_exec_id, o.graph_key, o.replays,
       o.kernels_per_replay, o.ops_per_replay, o.gpu_ns_per_replay, o.span_ns_per_replay,
       o.launch_ns, o.launch_latency_ns, o.total_gpu_ns, o.first_replay_ns,
       c.capture_site
FROM ordered o
LEFT JOIN captures c ON c.trace_id = o.trace_id AND c.pid = o.pid AND c.capture_index = o.graph_index
                    AND c.captures = o.graphs;
