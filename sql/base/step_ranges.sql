-- step_ranges: the training-step ranges the `steps` view reads (CPU-side ranges named
-- 'ProfilerStep#12', 'step 3', 'step_3'; for NVTX the name is ':step 3'), without the
-- GPU accounting of `steps`: for views that only need to know which step a time is in.
--
-- depends: nvtx_ranges
--
-- @column trace_id  Trace.
-- @column pid       Process.
-- @column step      Range name (as steps.step).
-- @column start_ns  Step start (ns).
-- @column end_ns    Step end (ns).
CREATE OR REPLACE VIEW step_ranges AS
SELECT trace_id, pid, range AS step, start_ns, end_ns
FROM nvtx_ranges
WHERE regexp_matches(regexp_replace(range, '^[^:]*:', ''), '^(ProfilerStep#[0-9]+|step[ _#-]?[0-9]+)$', 'i');
