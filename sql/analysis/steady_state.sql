-- steady_state: per process, the window of steady work and the rule it came from: the
-- steps after the leading warm-up ones: steps that ran graph capture or warm-up work
-- (gpu_op_phases; not counted in a process that ran nothing else, such as a trace of
-- vLLM's graph capture alone), or took more than 1.5 x the median step. For
-- 'periodicity' the steps are already the steady run of gpu_periods.
--
-- depends: steps, gpu_op_phases
-- materialize: per trace
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column steps           Steps in the window.
-- @column warmup_steps    Leading steps left out as warm-up.
-- @column median_step_ns  Median step wall time in the window (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column step_rule       The rule the steps came from (steps.step_rule).
-- @column start_ns        Start of the first steady step (ns).
-- @column end_ns          End of the last step (ns).
CREATE OR REPLACE VIEW steady_state AS
WITH s AS MATERIALIZED (
    SELECT * FROM steps
),
phases AS MATERIALIZED (
    SELECT trace_id, pid, start_ns, end_ns, phase IN ('capture', 'warmup') AS one_time
    FROM gpu_op_phases
),
steady AS (
    SELECT trace_id, pid FROM phases WHERE NOT one_time GROUP BY ALL
),
phased AS (
    SELECT s.trace_id, s.pid, s.step_index, bool_or(p.one_time) AS one_time
    FROM s
    SEMI JOIN steady USING (trace_id, pid)
    JOIN phases p ON p.trace_id = s.trace_id AND p.pid = s.pid
                 AND p.start_ns < s.end_ns AND p.end_ns > s.start_ns
    GROUP BY ALL
),
marked AS (
    SELECT s.*, coalesce(ph.one_time, false)
                OR s.wall_ns > 1.5 * median(s.wall_ns) OVER (PARTITION BY s.trace_id, s.pid) AS warm
    FROM s
    LEFT JOIN phased ph USING (trace_id, pid, step_index)
),
lead AS (
    SELECT *, bool_and(warm) OVER (PARTITION BY trace_id, pid ORDER BY step_index) AS leading_warm
    FROM marked
)
SELECT trace_id, pid, any_value(step_rule) AS step_rule,
       min(start_ns) FILTER (WHERE NOT leading_warm) AS start_ns,
       max(end_ns) FILTER (WHERE NOT leading_warm) AS end_ns,
       max(end_ns) FILTER (WHERE NOT leading_warm) - min(start_ns) FILTER (WHERE NOT leading_warm) AS duration_ns,
       count(*) FILTER (WHERE NOT leading_warm) AS steps,
       count(*) FILTER (WHERE leading_warm) AS warmup_steps,
       median(wall_ns) FILTER (WHERE NOT leading_warm) AS median_step_ns
FROM lead
GROUP BY trace_id, pid;
