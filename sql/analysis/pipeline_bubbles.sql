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
           arg_min(stream_id, start_ns) FILTER (WHERE op_class <> 'communication') AS stream_id
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

-- pipeline_bubbles: per step and stage of a pipeline-parallel run, the bubble: the part
-- of the step in which the stage worked on none of its micro-batches
-- (pipeline_microbatches: the union of their occupancy, clipped to the step), so waited
-- for its neighbour's send or receive, or did something else (the optimizer step, the
-- schedule's own host work); and, of it, the time its sends and receives ran
-- (p2p_wait_ns: blocked on the neighbour). Against the schedule's theoretical bubble
-- (p - 1) / (m + p - 1) (GPipe and 1F1B, p stages, m micro-batches, equal stage times),
-- which counts the schedule's span, not the optimizer: schedule_bubble_pct is the
-- stage's idle share of the span from the first micro-batch's start on any stage to the
-- last one's end, on the run's reference clock (rank_clock_offsets). The stage with the
-- most occupied time in the step holds the others up (is_holding). p: the ranks of the
-- stage's pipeline group, else the stages seen; m: the forward micro-batches counted on
-- the stage in the step. One row per step and stage with micro-batches.
--
-- depends: pipeline_microbatches, steps, collectives, process_group_calls, rank_clock_offsets, intervals_union_ns
--
-- @column run_id                  Distributed run.
-- @column trace_id                Trace.
-- @column rank                    Rank.
-- @column pid                     Process.
-- @column step                    Step name.
-- @column step_index              steps.step_index.
-- @column stage                   pipeline_microbatches.stage.
-- @column stages                  p: stages of the pipeline.
-- @column microbatches            m: forward micro-batches of the stage in the step.
-- @column wall_ns                 Step length (ns).
-- @column busy_ns                 Time in the step the stage worked on a micro-batch (ns).
-- @column bubble_ns               wall_ns - busy_ns (ns).
-- @column bubble_pct              bubble_ns / wall_ns x 100.
-- @column p2p_wait_ns             Part of the bubble with the stage's send or receive kernels running (ns).
-- @column schedule_ns             Span of the step's micro-batches over all stages (ns).
-- @column schedule_bubble_pct     (schedule_ns - busy_ns) / schedule_ns x 100: the stage's bubble within the schedule.
-- @column theoretical_bubble_pct  100 x (p - 1) / (m + p - 1).
-- @column is_holding              True for the stage with the most busy time in the step (the lowest on a tie).
CREATE OR REPLACE VIEW pipeline_bubbles AS
WITH mb AS MATERIALIZED (
    SELECT m.*, s.start_ns AS step_start_ns, s.end_ns AS step_end_ns, s.wall_ns,
           coalesce(o.applied_offset_ns, 0) AS offset_ns
    FROM pipeline_microbatches m
    JOIN steps s USING (trace_id, pid, step_index)
    LEFT JOIN rank_clock_offsets o ON o.run_id = m.run_id AND o.trace_id = m.trace_id
),
busy_lane AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index} AS lane,
           greatest(start_ns, step_start_ns) AS start_ns, least(end_ns, step_end_ns) AS end_ns
    FROM mb
),
p2p AS (
    SELECT {'trace_id': s.trace_id, 'pid': s.pid, 'step_index': s.step_index} AS lane,
           greatest(c.start_ns, s.start_ns) AS start_ns, least(c.end_ns, s.end_ns) AS end_ns
    FROM steps s
    JOIN collectives c ON c.trace_id = s.trace_id AND c.pid = s.pid AND c.start_ns < s.end_ns AND c.end_ns > s.start_ns
    WHERE c.operation IN ('send', 'recv', 'send_recv')
      AND (s.trace_id, s.pid, s.step_index) IN (SELECT (trace_id, pid, step_index) FROM mb)
),
busy_or_p2p AS (
    SELECT * FROM busy_lane UNION ALL SELECT * FROM p2p
),
lengths AS (
    SELECT b.lane.trace_id, b.lane.pid, b.lane.step_index, b.covered_ns AS busy_ns,
           coalesce(e.covered_ns, b.covered_ns) - b.covered_ns AS p2p_wait_ns
    FROM intervals_union_ns(busy_lane) b
    LEFT JOIN intervals_union_ns(busy_or_p2p) e ON e.lane = b.lane
),
groups AS (
    SELECT g.trace_id, g.pid, max(g.group_size) AS group_size
    FROM process_group_calls g
    JOIN collectives c USING (trace_id, pid, call_index)
    WHERE c.operation IN ('send', 'recv', 'send_recv')
    GROUP BY ALL
),
per_stage AS (
    SELECT run_id, trace_id, any_value(rank) AS rank, pid, step, step_index, stage, any_value(wall_ns) AS wall_ns,
           count(DISTINCT microbatch) FILTER (WHERE phase = 'forward') AS microbatches,
           min(start_ns - offset_ns) AS first_ns, max(end_ns - offset_ns) AS last_ns
    FROM mb
    GROUP BY run_id, trace_id, pid, step, step_index, stage
),
spans AS (
    SELECT run_id, step, max(last_ns) - min(first_ns) AS schedule_ns, count(DISTINCT stage) AS stages_seen
    FROM per_stage GROUP BY ALL
),
measured AS (
    SELECT p.*, l.busy_ns, l.p2p_wait_ns, w.schedule_ns,
           coalesce(g.group_size, w.stages_seen) AS stages
    FROM per_stage p
    JOIN lengths l USING (trace_id, pid, step_index)
    JOIN spans w USING (run_id, step)
    LEFT JOIN groups g USING (trace_id, pid)
)
SELECT run_id, trace_id, rank, pid, step, step_index, stage, CAST(stages AS BIGINT) AS stages, microbatches, wall_ns,
       CAST(busy_ns AS BIGINT) AS busy_ns, CAST(wall_ns - busy_ns AS BIGINT) AS bubble_ns,
       100.0 * (wall_ns - busy_ns) / nullif(wall_ns, 0) AS bubble_pct, CAST(p2p_wait_ns AS BIGINT) AS p2p_wait_ns,
       CAST(schedule_ns AS BIGINT) AS schedule_ns,
       100.0 * greatest(0, schedule_ns - busy_ns) / nullif(schedule_ns, 0) AS schedule_bubble_pct,
       100.0 * (stages - 1) / nullif(microbatches + stages - 1, 0) AS theoretical_bubble_pct,
       row_number() OVER (PARTITION BY run_id, step ORDER BY busy_ns DESC, stage) = 1 AS is_holding
FROM measured;
