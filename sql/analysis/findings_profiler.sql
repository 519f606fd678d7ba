-- finding_profiler_overhead: processes whose steady steps the profiler itself lengthened by
-- more than 10 % (profiler_cost): the step time, idle share and "what bounds the step" on the
-- page are then partly the profiler's own cost.
--
-- depends: profiler_cost, steady_summary
--
-- @column trace_id     Trace.
-- @column rule         'profiler_overhead'.
-- @column severity     'warning' at 25 % or more, else 'info'.
-- @column pid          Process.
-- @column start_ns     Start of the steady steps (ns).
-- @column duration_ns  Estimated profiler cost per step that lengthened it (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_profiler_overhead AS
SELECT p.trace_id, 'profiler_overhead' AS rule,
       CASE WHEN p.inflation_pct >= 25 THEN 'warning' ELSE 'info' END AS severity,
       p.pid, s.start_ns, p.step_ns - p.est_step_ns AS duration_ns,
       printf('the profiler recorded %.0f operators and API calls%s per step; at its measured cost per event '
              || 'it lengthened the median step from an estimated %.3f ms to %.3f ms (+%.0f %%)',
              p.events_per_step, CASE WHEN p.frames_per_step > 0 THEN printf(' and %.0f Python frames',
                                                                            p.frames_per_step) ELSE '' END,
              p.est_step_ns / 1e6, p.step_ns / 1e6, p.inflation_pct) AS evidence,
       'Read the host-side numbers as inflated: time the loop without a profiler (CUDA events), and profile '
       || 'with fewer settings (with_stack, record_shapes and profile_memory add cost per event) or fewer '
       || 'steps; a "cpu" or "launch" bound may be partly the profiler''s.' AS advice
FROM profiler_cost p
JOIN steady_summary s USING (trace_id, pid)
WHERE p.inflation_pct > 10;
