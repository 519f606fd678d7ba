-- largest_gpu_gaps: a trace's GPU idle gaps longer than 10 us (gpu_gap_causes_over)
-- ranked by length, with where in the trace they lie: which stalls to look at first (the
-- trace page's "Largest idle gaps" table). One row per gap.
--
-- depends: gpu_gap_causes_over
-- materialize: per trace
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column device_id       GPU.
-- @column start_ns        Gap start: end of the busy time before it (ns).
-- @column end_ns          Gap end: start of next_op (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column next_op         Name of the operation that ended the gap.
-- @column next_category   'kernel', 'memcpy' or 'memset'.
-- @column launch_api      Name of the API call that launched next_op (NULL if unknown).
-- @column launch_delay_ns Launch call start - gap start (ns): > 0 when issued after the GPU went idle.
-- @column cause           'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column host_activity   What the launching thread was doing at the gap start (NULL if nothing recorded).
-- @column at_ns      Gap start - the start of the trace's first gap over 10 us (ns).
-- @column size_rank  1 = the trace's longest gap (equal lengths: the earlier first).
CREATE OR REPLACE VIEW largest_gpu_gaps AS
SELECT *, start_ns - min(start_ns) OVER (PARTITION BY trace_id) AS at_ns,
       row_number() OVER (PARTITION BY trace_id ORDER BY duration_ns DESC, start_ns, pid, device_id) AS size_rank
FROM gpu_gap_causes_over(10000);

-- gpu_gap_causes: every GPU idle gap longer than 100 us with what ended it and why the GPU
-- waited (gpu_gap_causes_over(100000)): the gaps of largest_gpu_gaps over 100 us, whose
-- columns each gap's own rows decide (the threshold only selects gaps), so the gaps are
-- worked out once per trace.
--
-- depends: largest_gpu_gaps
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column device_id        GPU.
-- @column start_ns         Gap start: end of the busy time before it (ns).
-- @column end_ns           Gap end: start of next_op (ns).
-- @column duration_ns      end_ns - start_ns.
-- @column next_op          Name of the operation that ended the gap.
-- @column next_category    'kernel', 'memcpy' or 'memset'.
-- @column launch_api       Name of the API call that launched next_op (NULL if unknown).
-- @column launch_delay_ns  Launch call start - gap start (ns): > 0 when issued after the GPU went idle.
-- @column cause            'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column host_activity    What the launching thread was doing at the gap start (NULL if nothing recorded).
CREATE OR REPLACE VIEW gpu_gap_causes AS
SELECT * EXCLUDE (at_ns, size_rank)
FROM largest_gpu_gaps
WHERE duration_ns > 100000;
