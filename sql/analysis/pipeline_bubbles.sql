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
