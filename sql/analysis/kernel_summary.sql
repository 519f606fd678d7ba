-- kernel_summary: where the kernel time goes, per kernel name (NVIDIA's
-- cuda_gpu_kern_sum). One row per trace and kernel name.
--
-- depends: kernels, duration_stats
--
-- @column trace_id    Trace.
-- @column name        Kernel name (demangled, as nsys prints it).
-- @column time_pct    total_ns as a percentage of all kernel time of the trace
--                     (of the listed kernels, not of wall time).
-- @column total_ns    Sum of durations (ns).
-- @column instances   Number of executions.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns; mean of the middle two for even counts).
-- @column min_ns      Shortest execution (ns).
-- @column max_ns      Longest execution (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one instance.
CREATE OR REPLACE VIEW kernel_summary AS
SELECT trace_id, name,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM kernels
GROUP BY trace_id, name;

-- kernel_summary_by_launch_config: kernel_summary split by grid and block size
-- (NVIDIA's cuda_gpu_kern_gb_sum). Same columns plus the launch configuration.
--
-- @column grid_x   Grid size x (blocks).
-- @column grid_y   Grid size y (blocks).
-- @column grid_z   Grid size z (blocks).
-- @column block_x  Block size x (threads).
-- @column block_y  Block size y (threads).
-- @column block_z  Block size z (threads).
CREATE OR REPLACE VIEW kernel_summary_by_launch_config AS
SELECT trace_id, name, grid_x, grid_y, grid_z, block_x, block_y, block_z,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM kernels
GROUP BY trace_id, name, grid_x, grid_y, grid_z, block_x, block_y, block_z;

-- kernel_summary_by_device: kernel_summary per process and GPU, for multi-rank
-- and multi-GPU traces. time_pct is relative to that process and device.
--
-- @column pid        Process that launched the kernels.
-- @column device_id  GPU.
CREATE OR REPLACE VIEW kernel_summary_by_device AS
SELECT trace_id, pid, device_id, name,
       100.0 * sum(duration_ns)
           / sum(sum(duration_ns)) OVER (PARTITION BY trace_id, pid, device_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM kernels
GROUP BY trace_id, pid, device_id, name;
