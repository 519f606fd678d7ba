-- osrt_summary: time in OS runtime calls (pthread, poll, read, ...) per function
-- (NVIDIA's osrt_sum). Nsight traces recorded with -t osrt only. Rows without a
-- nesting level are nsys's own markers ('OS runtime libraries profiling started',
-- '[Unknown]'), not calls, and are left out as NVIDIA does.
--
-- depends: os_runtime_calls, duration_stats
-- materialize: per trace
--
-- @column trace_id    Trace.
-- @column name        Function name.
-- @column time_pct    total_ns as a percentage of all OS runtime time.
-- @column total_ns    Sum of durations (ns).
-- @column num_calls   Number of calls.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one call.
CREATE OR REPLACE VIEW osrt_summary AS
SELECT * RENAME (instances AS num_calls) FROM (
SELECT trace_id, name,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM os_runtime_calls
WHERE nesting_level IS NOT NULL
GROUP BY trace_id, name
);
