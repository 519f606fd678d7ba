-- gpu_op_phases: every GPU operation with its phase, so that one-time graph capture and
-- warm-up work can be told apart from the steady work of a serving or inference trace:
--   'replay'  run by a CUDA/HIP graph replay (graph_ops);
--   'capture' launched while the process was capturing graphs: from its first stream
--             capture begin to its last capture end (graph_captures), including the eager
--             work run between captures (warm-up runs of each captured shape, vLLM's
--             piecewise attention), or inside a range named like a capture
--             (vLLM 'capture_<size>_<mode>', 'cudagraph capture', 'graph_capture');
--   'warmup'  launched before that, in a process that captures graphs;
--   'eager'   everything else (directly launched work).
-- The launch time is the start of the launch call when it is recorded, else the
-- operation's own start.
--
-- depends: gpu_ops, api, graph_launches, graph_captures, nvtx_ranges
-- materialize: per trace
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column category        'kernel', 'memcpy' or 'memset'.
-- @column name            Operation name.
-- @column start_ns        Start (ns).
-- @column end_ns          End (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column correlation_id  Id of the launching API call.
-- @column phase           'replay', 'capture', 'warmup' or 'eager'.

-- gpu_phase_summary: GPU operations and time per trace, process and phase.
--
-- @column ops             Operations.
-- @column kernels         Kernels.
-- @column gpu_ns          Summed duration (ns).
-- @column first_ns        First start (ns).
-- @column last_ns         Last end (ns).
CREATE OR REPLACE VIEW gpu_op_phases AS
WITH windows AS (
    SELECT trace_id, pid, min(start_ns) AS capture_start_ns, max(end_ns) AS capture_end_ns
    FROM graph_captures
    GROUP BY ALL
),
named AS (
    SELECT trace_id, pid, tid, start_ns, end_ns
    FROM nvtx_ranges
    WHERE regexp_matches(range, '(^|[^a-z])(cuda_?)?graph[ _]?capture|^capture_[0-9]+', 'i')
),
graphed AS (
    -- processes that capture or replay graphs; every operation of the others is 'eager'
    SELECT trace_id, pid FROM windows
    UNION SELECT trace_id, pid FROM named
    UNION SELECT trace_id, pid FROM graph_launches
),
ops AS (
    SELECT o.*, g.trace_id IS NOT NULL AS in_graphed
    FROM gpu_ops o
    LEFT JOIN graphed g ON g.trace_id = o.trace_id AND g.pid = o.pid
),
launched AS (
    SELECT o.trace_id, o.pid, o.device_id, o.stream_id, o.category, o.name, o.start_ns,
           o.end_ns, o.duration_ns, o.correlation_id,
           coalesce(a.start_ns, o.start_ns) AS launch_ns, coalesce(a.tid, o.tid) AS tid
    FROM ops o
    LEFT JOIN (SELECT a.trace_id, a.pid, a.correlation_id, min(a.start_ns) AS start_ns, any_value(a.tid) AS tid
               FROM api a SEMI JOIN graphed g ON g.trace_id = a.trace_id AND g.pid = a.pid
               WHERE a.correlation_id IS NOT NULL GROUP BY ALL) a
      ON a.trace_id = o.trace_id AND a.pid = o.pid AND a.correlation_id = o.correlation_id
    WHERE o.in_graphed
),
in_named AS (
    SELECT DISTINCT l.trace_id, l.pid, l.correlation_id, l.start_ns
    FROM launched l
    JOIN named n ON n.trace_id = l.trace_id AND n.pid = l.pid AND n.tid = l.tid
                AND l.launch_ns >= n.start_ns AND l.launch_ns < n.end_ns
),
replayed AS (
    SELECT DISTINCT trace_id, pid, correlation_id FROM graph_launches
)
SELECT l.trace_id, l.pid, l.device_id, l.stream_id, l.category, l.name, l.start_ns, l.end_ns, l.duration_ns,
       l.correlation_id,
       CASE WHEN r.correlation_id IS NOT NULL THEN 'replay'
            WHEN w.capture_start_ns <= l.launch_ns AND l.launch_ns <= w.capture_end_ns THEN 'capture'
            WHEN i.correlation_id IS NOT NULL THEN 'capture'
            WHEN l.launch_ns < w.capture_start_ns THEN 'warmup'
            ELSE 'eager' END AS phase
FROM launched l
LEFT JOIN replayed r ON r.trace_id = l.trace_id AND r.pid = l.pid AND r.correlation_id = l.correlation_id
LEFT JOIN windows w ON w.trace_id = l.trace_id AND w.pid = l.pid
LEFT JOIN in_named i ON i.trace_id = l.trace_id AND i.pid = l.pid AND i.correlation_id = l.correlation_id
                    AND i.start_ns = l.start_ns
UNION ALL
SELECT trace_id, pid, device_id, stream_id, category, name, start_ns, end_ns, duration_ns, correlation_id, 'eager'
FROM ops
WHERE NOT in_graphed;

CREATE OR REPLACE VIEW gpu_phase_summary AS
SELECT trace_id, pid, phase,
       count(*) AS ops,
       count(*) FILTER (WHERE category = 'kernel') AS kernels,
       CAST(sum(duration_ns) AS BIGINT) AS gpu_ns,
       min(start_ns) AS first_ns,
       max(end_ns) AS last_ns
FROM gpu_op_phases
GROUP BY ALL;
