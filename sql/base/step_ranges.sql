-- step_ranges: the training-step ranges of rule 'profiler_step' (CPU-side ranges named
-- 'ProfilerStep#12', 'step 3', 'step_3'; for NVTX the name is ':step 3'), without the
-- GPU accounting of `steps`: for views that only need to know which training step a time is in.
--
-- depends: nvtx_ranges, step_rule_pattern
--
-- @column trace_id  Trace.
-- @column pid       Process.
-- @column step      Range name (as steps.step).
-- @column start_ns  Step start (ns).
-- @column end_ns    Step end (ns).
CREATE OR REPLACE VIEW step_ranges AS
SELECT trace_id, pid, range AS step, start_ns, end_ns
FROM nvtx_ranges
WHERE regexp_matches(regexp_replace(range, '^[^:]*:', ''), step_rule_pattern('profiler_step'), 'i');
