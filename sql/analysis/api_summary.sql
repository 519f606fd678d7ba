-- api_summary: time in CUDA/HIP runtime and driver API calls per API name
-- (NVIDIA's cuda_api_sum). One row per trace and name.
--
-- depends: api, duration_stats
-- materialize: per trace
--
-- @column trace_id    Trace.
-- @column name        API name without the '_vNNNN' suffix.
-- @column time_pct    total_ns as a percentage of all API time of the trace.
-- @column total_ns    Sum of call durations (ns).
-- @column num_calls   Number of calls.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one call.
CREATE OR REPLACE VIEW api_summary AS
SELECT * RENAME (instances AS num_calls) FROM (
SELECT trace_id, name,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM api
GROUP BY trace_id, name
);

-- api_summary_nsys: cuda_api_sum exactly as NVIDIA computes it: grouped by the
-- recorded name (nsys groups by string id), so a runtime call and its
-- --cudabacktrace twin ('cudaLaunchKernel_v7000' and 'cudaLaunchKernel') give two
-- rows that print the same name, and a driver call and its twin are counted twice.
-- api_summary is the corrected version; this one exists for parity checks.
--
-- depends: api_calls
--
-- @column raw_name    The name as recorded (the grouping key).
-- (other columns as in api_summary)
CREATE OR REPLACE VIEW api_summary_nsys AS
SELECT * RENAME (instances AS num_calls) FROM (
SELECT trace_id, regexp_replace(name, '_v[0-9]{4}$', '') AS name, name AS raw_name,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM api_calls
GROUP BY trace_id, name
);
