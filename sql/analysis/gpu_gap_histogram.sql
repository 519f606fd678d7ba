-- gpu_gap_histogram: how a trace's GPU idle time in gaps longer than 10 us splits by the
-- gap's length (gap_length_bins) and its cause (largest_gpu_gaps: every gap over 10 us with its
-- cause, evaluated once per trace and stored): are there many
-- short waits or a few long stalls, and who was late? Wall time per GPU (gpu_gaps: no
-- operation on any stream of it). One row per trace, bin and cause that has gaps.
--
-- depends: largest_gpu_gaps, gap_length_bins
-- materialize: per trace
--
-- @column trace_id   Trace.
-- @column bin_index  Order of the length bin (gap_length_bins).
-- @column bin        Its label, e.g. '0.1-0.3 ms'.
-- @column cause      'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column gaps       Number of gaps.
-- @column idle_ns    Sum of their durations (ns).
CREATE OR REPLACE VIEW gpu_gap_histogram AS
SELECT g.trace_id, b.bin_index, b.bin, g.cause, count(*) AS gaps, CAST(sum(g.duration_ns) AS BIGINT) AS idle_ns
FROM largest_gpu_gaps g
JOIN gap_length_bins b ON g.duration_ns >= b.min_ns AND (b.max_ns IS NULL OR g.duration_ns < b.max_ns)
GROUP BY g.trace_id, b.bin_index, b.bin, g.cause;
