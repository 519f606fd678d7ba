-- gpu_summary: kernels and memory operations together, per name (NVIDIA's
-- cuda_gpu_sum, like nvprof --print-gpu-summary). One row per trace and name.
--
-- depends: gpu_ops
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
       CAST(sum(duration_ns) AS BIGINT) AS total_ns,
       count(*) AS instances,
       avg(duration_ns) AS avg_ns,
       median(duration_ns) AS med_ns,
       min(duration_ns) AS min_ns,
       max(duration_ns) AS max_ns,
       coalesce(stddev_samp(duration_ns), 0) AS stddev_ns
FROM gpu_ops
GROUP BY trace_id, category = 'kernel', name;
