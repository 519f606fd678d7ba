-- profiler_cost: what the profiler itself added to each steady step, estimated from what
-- the trace holds, and the step without it. A profiler pays per event it records: the
-- PyTorch profiler per CPU operator and CUDA runtime call (more with with_stack, per Python
-- frame), Nsight Systems per traced CUDA API call. That cost lands on the host; it lengthens
-- the step only where the host bounds it, so the step without the profiler is estimated as
--   est_step_ns = wall_ns - min(events x cost per event, the host's time bounding the step)
-- where the host's time bounding the step is its time on the step's critical path
-- (critical_path_summary: cpu_ns + launch_overhead_ns) when the path covers at least 80 % of
-- the step, else the step's GPU idle time (a GPU-bound step hides the profiler's cost; a path
-- of Nsight's API calls alone misses the host's time between them). Per-event costs
-- (profiler_event_costs) were measured on an H100 machine (Intel Xeon host, PyTorch 2.11,
-- Nsight Systems 2025.3.1) as the profiled step time less the unprofiled one (CUDA events)
-- of the launch-bound program of tests/recorded/judgments, divided by its events per step:
-- the PyTorch profiler 0.69 ms over 534 operators and calls, with_stack 1.70 ms more over
-- 797 Python frames; Nsight 1.67 ms over 242 CUDA API calls. Other hosts differ: read it as
-- an estimate of the inflation, not a measurement.
--
-- depends: steps, step_phases, cpu_ops, api_calls, python_frames, traces, critical_path_summary
--
-- @column trace_id              Trace.
-- @column pid                   Process.
-- @column source                'pytorch' or 'nsys' (traces.source).
-- @column steps                 Steady steps measured.
-- @column events_per_step       Recorded CPU operators and CUDA runtime/driver calls per steady step.
-- @column frames_per_step       Recorded Python frames per steady step (with_stack).
-- @column overhead_ns           Estimated profiler cost per steady step (ns).
-- @column step_ns               Median wall time of the steady steps, as recorded (ns).
-- @column est_step_ns           Median estimated step without the profiler (ns; see above).
-- @column inflation_pct         (step_ns - est_step_ns) / est_step_ns x 100: how much the profiler
--                               lengthened the step (%).

-- profiler_event_costs: the cost per recorded event of each profiler (see profiler_cost).
--
-- @column source        'pytorch' or 'nsys'.
-- @column event         'call_or_operator' or 'python_frame'.
-- @column cost_ns       Host time per event (ns).
CREATE OR REPLACE VIEW profiler_event_costs AS
SELECT * FROM (VALUES
    ('pytorch', 'call_or_operator', 1290),
    ('pytorch', 'python_frame', 2130),
    ('nsys', 'call_or_operator', 6900)
) AS c(source, event, cost_ns);

CREATE OR REPLACE VIEW profiler_cost AS
WITH steady AS (
    SELECT s.trace_id, s.pid, s.step_index, s.start_ns, s.end_ns, s.wall_ns, s.gpu_busy_ns, t.source
    FROM steps s
    JOIN step_phases p USING (trace_id, pid, step_index)
    JOIN traces t USING (trace_id)
    WHERE p.phase = 'steady'
),
events AS (
    SELECT trace_id, pid, start_ns FROM cpu_ops
    UNION ALL SELECT trace_id, pid, start_ns FROM api_calls
),
counted AS (
    SELECT s.*,
           (SELECT count(*) FROM events e WHERE e.trace_id = s.trace_id AND e.pid = s.pid
                AND e.start_ns >= s.start_ns AND e.start_ns < s.end_ns) AS events,
           (SELECT count(*) FROM python_frames f WHERE f.trace_id = s.trace_id AND f.pid = s.pid
                AND f.start_ns >= s.start_ns AND f.start_ns < s.end_ns) AS frames
    FROM steady s
),
costed AS (
    SELECT c.*,
           c.events * coalesce((SELECT cost_ns FROM profiler_event_costs k
                                WHERE k.source = c.source AND k.event = 'call_or_operator'), 0)
           + c.frames * coalesce((SELECT cost_ns FROM profiler_event_costs k
                                  WHERE k.source = c.source AND k.event = 'python_frame'), 0) AS overhead_ns
    FROM counted c
),
estimated AS (
    SELECT c.*,
           c.wall_ns - least(c.overhead_ns,
                             CASE WHEN p.path_pct_of_step >= 80 THEN p.cpu_ns + p.launch_overhead_ns
                                  ELSE c.wall_ns - c.gpu_busy_ns END) AS est_ns
    FROM costed c
    LEFT JOIN critical_path_summary p USING (trace_id, pid, step_index)
)
SELECT trace_id, pid, any_value(source) AS source, count(*) AS steps,
       median(events) AS events_per_step, median(frames) AS frames_per_step,
       CAST(median(overhead_ns) AS BIGINT) AS overhead_ns,
       CAST(median(wall_ns) AS BIGINT) AS step_ns,
       CAST(median(est_ns) AS BIGINT) AS est_step_ns,
       100.0 * (median(wall_ns) - median(est_ns)) / nullif(median(est_ns), 0) AS inflation_pct
FROM estimated
GROUP BY trace_id, pid;
