-- gpu_summary: kernels and memory operations together, per name (NVIDIA's
-- cuda_gpu_sum, like nvprof --print-gpu-summary). One row per trace and name.
--
-- depends: gpu_ops, duration_stats
--
-- @column trace_id    Trace.
-- @column category    'CUDA_KERNEL' or 'MEMORY_OPER' (NVIDIA's labels).
-- @column name        Kernel name, or the memory operation ('[CUDA memset]', ...).
-- @column time_pct    total_ns as a percentage of all GPU operation time.
-- @column total_ns    Sum of durations (ns).
-- @column instances   Number of operations.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one instance.
CREATE OR REPLACE VIEW gpu_summary AS
SELECT trace_id,
       CASE WHEN category = 'kernel' THEN 'CUDA_KERNEL' ELSE 'MEMORY_OPER' END
           AS category,
       name,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM gpu_ops
WHERE category <> 'graph'  -- graph replays traced as a whole: not in NVIDIA's report
GROUP BY trace_id, category = 'kernel', name;
