-- fusion_summary: what fusing every candidate chain would save, per trace and step: the GPU
-- time of the chains now, the predicted saving, and its share of the step (the step's range
-- on the CPU, step_ranges). Rows without a step (traces without step ranges) sum the whole trace.
--
-- depends: fusion_chains, step_ranges
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column step            Training step (NULL: the whole trace, which has no steps).
-- @column start_ns        Start of the step (ns; NULL without steps).
-- @column step_ns         Duration of the step (ns; NULL without steps).
-- @column chains          Candidate chains in the step.
-- @column kernels         Kernels in them.
-- @column device_ns       Their kernel time now (ns).
-- @column saved_ns        Predicted GPU-time saving of fusing them all (ns).
-- @column saved_pct       saved_ns, % of step_ns.
-- @column launches_saved  Kernel launches the fused kernels would not make.
CREATE OR REPLACE VIEW fusion_summary AS
SELECT c.trace_id, c.pid, c.step, any_value(s.start_ns) AS start_ns, any_value(s.end_ns - s.start_ns) AS step_ns, count(*) AS chains,
       sum(c.kernels) AS kernels, sum(c.device_ns) AS device_ns, sum(c.saved_ns) AS saved_ns,
       100.0 * sum(c.saved_ns) / nullif(any_value(s.end_ns - s.start_ns), 0) AS saved_pct,
       sum(c.launches_saved) AS launches_saved
FROM fusion_chains c
LEFT JOIN step_ranges s ON s.trace_id = c.trace_id AND s.pid = c.pid AND s.step = c.step
GROUP BY c.trace_id, c.pid, c.step;
