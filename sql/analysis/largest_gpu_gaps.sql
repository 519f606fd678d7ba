-- largest_gpu_gaps: a trace's GPU idle gaps longer than 10 us (gpu_gap_causes_over)
-- ranked by length, with where in the trace they lie: which stalls to look at first (the
-- trace page's "Largest idle gaps" table). One row per gap.
--
-- depends: gpu_gap_causes_over
--
-- @column at_ns      Gap start - the start of the trace's first gap over 10 us (ns).
-- @column size_rank  1 = the trace's longest gap (ties in no fixed order).
CREATE OR REPLACE VIEW largest_gpu_gaps AS
SELECT *, start_ns - min(start_ns) OVER (PARTITION BY trace_id) AS at_ns,
       row_number() OVER (PARTITION BY trace_id ORDER BY duration_ns DESC) AS size_rank
FROM gpu_gap_causes_over(10000);
