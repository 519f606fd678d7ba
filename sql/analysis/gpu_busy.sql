-- gpu_busy: the intervals during which a GPU counts as busy for one process, with
-- NVIDIA's rule (nsys analyze gpu_gaps / gpu_time_util): its kernels, memcpys and
-- memsets (start > 0), plus the CUDA profiling overhead of that process that falls
-- strictly inside the device's active range [first op start, last op end] (nsys
-- copies the process's overhead onto each of its devices: time the user cannot act on).
-- One row per interval; intervals may overlap.
--
-- depends: gpu_ops, profiler_overhead, gpu_active_range
--
-- @column trace_id    Trace.
-- @column pid         Process that used the GPU.
-- @column device_id   GPU.
-- @column start_ns    Interval start (ns).
-- @column end_ns      Interval end (ns).
-- @column is_overhead True for profiler overhead, false for GPU work.
CREATE OR REPLACE VIEW gpu_busy AS
SELECT trace_id, pid, device_id, start_ns, end_ns, false AS is_overhead
FROM gpu_ops
WHERE start_ns > 0
UNION ALL
SELECT o.trace_id, o.pid, a.device_id, o.start_ns, o.end_ns, true
FROM profiler_overhead o
JOIN gpu_active_range a ON a.trace_id = o.trace_id AND a.pid = o.pid
WHERE o.name IN ('CUDA profiling data flush overhead', 'CUDA profiling stop overhead',
                 'CUDA profiling overhead')
  AND o.start_ns > a.first_ns AND o.end_ns < a.last_ns;
