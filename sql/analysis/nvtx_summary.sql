-- nvtx_summary: time inside named ranges per range name (NVIDIA's nvtx_sum):
-- NVTX push/pop and start/end ranges, and PyTorch user annotations (record_function,
-- ProfilerStep#N). One row per trace, range name and style.
--
-- depends: nvtx_ranges, duration_stats
--
-- @column trace_id    Trace.
-- @column range       Range name; for NVTX '<domain>:<text>' as NVIDIA prints it
--                     (':text' in the default domain).
-- @column style       'PushPop', 'StartEnd' (NVTX) or 'UserAnnotation' (PyTorch).
-- @column time_pct    total_ns as a percentage of the time of all listed ranges.
-- @column total_ns    Sum of range durations (ns); a range never closed ends at the
--                     end of the trace.
-- @column instances   Number of ranges.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one range.
CREATE OR REPLACE VIEW nvtx_summary AS
SELECT trace_id, range, style,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM nvtx_ranges
GROUP BY trace_id, range, style;
