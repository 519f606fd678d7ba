-- step_phases: whether each step is warm-up or steady state: 'warm-up' for the leading
-- steps that steady_state leaves out of its window, 'steady' for the others (all steps of a
-- process whose window holds none are 'steady': nothing better to compare with). Findings
-- and report pages that speak of "the steps" mean the steady ones.
--
-- depends: steps, steady_state
--
-- @column trace_id    Trace.
-- @column pid         Process.
-- @column step_index  Order of the step in its process (as in steps).
-- @column start_ns    Step start (ns).
-- @column end_ns      Step end (ns).
-- @column phase       'warm-up' or 'steady'.
CREATE OR REPLACE VIEW step_phases AS
SELECT s.trace_id, s.pid, s.step_index, s.start_ns, s.end_ns,
       CASE WHEN w.steps > 0 AND s.start_ns < w.start_ns THEN 'warm-up' ELSE 'steady' END AS phase
FROM steps s
LEFT JOIN steady_state w ON w.trace_id = s.trace_id AND w.pid = s.pid;
