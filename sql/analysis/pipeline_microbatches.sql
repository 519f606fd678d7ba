-- pipeline_microbatches: the micro-batches of a pipeline-parallel schedule
-- (torch.distributed.pipelining), each forward and backward of each micro-batch on each
-- stage, from the schedule's ranges: 'Forward <mb>' / 'Backward <mb>' (GPipe, 1F1B: one
-- stage per rank) or 'PP:<stage><F|B|I|W><mb>' (the multi-stage schedules). A range holds
-- the receive of the micro-batch's input, its compute and the send of its output; the
-- micro-batch occupies its stage from the first of its own operators (the first top-level
-- CPU operator in the range that is no send or receive, on any thread: the backward runs
-- on autograd's) or, if later, the moment its input arrived (the end of the receives'
-- kernels before its first compute kernel, and of the compute stream's previous
-- operation), to the end of its last compute kernel or of its last operator, whichever is
-- later. Host time inside counts as occupied: a host-bound stage is busy, not waiting. Only
-- processes that send or receive. One row per range with compute kernels.
--
-- depends: annotations, cpu_ops, api_calls, gpu_op_class, steps, rank_runs, process_group_calls, collectives
--
-- @column run_id              Distributed run (rank_runs.run_id; the trace id for a trace of no run).
-- @column trace_id            Trace.
-- @column rank                Rank (NULL when unknown).
-- @column pid                 Process.
-- @column step                Step whose host range the micro-batch's range starts in.
-- @column step_index          Its steps.step_index.
-- @column stage               Pipeline stage: from 'PP:' names, else the rank's position in its pipeline group
--                             (the group of its sends and receives), else the rank.
-- @column phase               'forward' or 'backward' ('B', 'I' and 'W' of the multi-stage schedules).
-- @column microbatch          Micro-batch index.
-- @column range_start_ns      Start of the schedule's range (ns, trace clock).
-- @column range_end_ns        Its end (ns).
-- @column start_ns            Start of the micro-batch's occupancy of the stage (ns).
-- @column end_ns              Its end (ns).
-- @column compute_start_ns    First compute kernel (ns).
-- @column compute_end_ns      End of the last compute kernel (ns).
-- @column input_wait_ns       start_ns - range_start_ns: the range's time before the micro-batch could
--                             start (its receive and the wait for the neighbour) (ns).
CREATE OR REPLACE VIEW pipeline_microbatches AS
WITH ranges AS (
    SELECT a.trace_id, a.pid, a.tid, a.start_ns, a.end_ns,
           CASE WHEN starts_with(a.name, 'PP:') THEN CAST(regexp_extract(a.name, '^PP:(\d+)', 1) AS INTEGER) END AS named_stage,
           CASE WHEN regexp_matches(a.name, '^Forward \d+$|^PP:\d+F\d+$') THEN 'forward' ELSE 'backward' END AS phase,
           CAST(regexp_extract(a.name, '(\d+)$', 1) AS INTEGER) AS microbatch
    FROM annotations a
    WHERE NOT a.is_gpu AND a.end_ns IS NOT NULL
      AND regexp_matches(a.name, '^(Forward|Backward) \d+$|^PP:\d+[FBIW]\d+$')
      -- a process that sends or receives: a user's own 'Forward 1' range elsewhere is no schedule's
      AND (a.trace_id, a.pid) IN (SELECT (trace_id, pid) FROM collectives WHERE operation IN ('send', 'recv', 'send_recv'))
),
launched AS (
    -- the GPU operations launched during a range, from any thread of its process
    SELECT g.trace_id, g.pid, g.start_ns AS range_start_ns, o.op_class, o.stream_id, o.start_ns, o.end_ns,
           a.start_ns AS launch_ns
    FROM ranges g
    JOIN api_calls a ON a.trace_id = g.trace_id AND a.pid = g.pid AND a.start_ns >= g.start_ns AND a.start_ns < g.end_ns
                    AND a.api IS DISTINCT FROM 'backtrace'
    JOIN gpu_op_class o ON o.trace_id = a.trace_id AND o.pid = a.pid AND o.correlation_id = a.correlation_id
),
kernels AS (
    SELECT trace_id, pid, range_start_ns,
           min(start_ns) FILTER (WHERE op_class <> 'communication') AS compute_start_ns,
           max(end_ns) FILTER (WHERE op_class <> 'communication') AS compute_end_ns,
           arg_min(stream_id, (start_ns, stream_id)) FILTER (WHERE op_class <> 'communication') AS stream_id
    FROM launched
    GROUP BY ALL
    HAVING count(*) FILTER (WHERE op_class <> 'communication') > 0
),
received AS (
    -- the receives' kernels that ended before the first compute kernel started
    SELECT l.trace_id, l.pid, l.range_start_ns, max(l.end_ns) AS received_ns
    FROM launched l JOIN kernels k USING (trace_id, pid, range_start_ns)
    WHERE l.op_class = 'communication' AND l.start_ns < k.compute_start_ns
    GROUP BY ALL
),
operators AS (
    SELECT g.trace_id, g.pid, g.start_ns AS range_start_ns, min(x.start_ns) AS first_op_ns, max(x.end_ns) AS last_op_ns
    FROM ranges g
    JOIN cpu_ops x ON x.trace_id = g.trace_id AND x.pid = g.pid AND x.depth = 0
                  AND x.start_ns >= g.start_ns AND x.end_ns <= g.end_ns
    WHERE NOT regexp_matches(x.name, '^(c10d::|record_param_comms|nccl:)')
    GROUP BY ALL
),
stream_before AS (
    -- the end of the compute stream's last operation before the micro-batch's first kernel
    SELECT k.trace_id, k.pid, k.range_start_ns, max(o.end_ns) AS previous_end_ns
    FROM kernels k
    JOIN gpu_op_class o ON o.trace_id = k.trace_id AND o.pid = k.pid AND o.stream_id = k.stream_id
                       AND o.start_ns < k.compute_start_ns
    GROUP BY ALL
),
groups AS (
    -- the group of each rank's sends and receives: its pipeline group
    SELECT g.trace_id, g.pid, arg_max(g.group_ranks, g.call_index) AS group_ranks
    FROM process_group_calls g
    JOIN collectives c USING (trace_id, pid, call_index)
    WHERE c.operation IN ('send', 'recv', 'send_recv')
    GROUP BY ALL
),
occupied AS (
    SELECT g.trace_id, g.pid, g.named_stage, g.phase, g.microbatch, g.start_ns AS range_start_ns,
           g.end_ns AS range_end_ns, k.compute_start_ns, k.compute_end_ns,
           least(k.compute_start_ns, greatest(coalesce(o.first_op_ns, k.compute_start_ns), coalesce(r.received_ns, 0),
                                              coalesce(b.previous_end_ns, 0))) AS start_ns,
           greatest(k.compute_end_ns, coalesce(o.last_op_ns, 0)) AS end_ns
    FROM ranges g
    JOIN kernels k ON k.trace_id = g.trace_id AND k.pid = g.pid AND k.range_start_ns = g.start_ns
    LEFT JOIN operators o ON o.trace_id = g.trace_id AND o.pid = g.pid AND o.range_start_ns = g.start_ns
    LEFT JOIN received r ON r.trace_id = g.trace_id AND r.pid = g.pid AND r.range_start_ns = g.start_ns
    LEFT JOIN stream_before b ON b.trace_id = g.trace_id AND b.pid = g.pid AND b.range_start_ns = g.start_ns
)
SELECT coalesce(r.run_id, o.trace_id) AS run_id, o.trace_id, r.rank, o.pid, s.step, s.step_index,
       CAST(coalesce(o.named_stage, list_position(p.group_ranks, r.rank) - 1, r.rank) AS INTEGER) AS stage,
       o.phase, o.microbatch, o.range_start_ns, o.range_end_ns, o.start_ns, o.end_ns,
       o.compute_start_ns, o.compute_end_ns, o.start_ns - o.range_start_ns AS input_wait_ns
FROM occupied o
LEFT JOIN rank_runs r ON r.trace_id = o.trace_id AND r.pid = o.pid
LEFT JOIN groups p ON p.trace_id = o.trace_id AND p.pid = o.pid
LEFT JOIN steps s ON s.trace_id = o.trace_id AND s.pid = o.pid
                 AND o.range_start_ns >= coalesce(s.host_start_ns, s.start_ns)
                 AND o.range_start_ns < coalesce(s.host_end_ns, s.end_ns);
