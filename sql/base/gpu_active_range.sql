-- gpu_active_range: per process and GPU, the span from its first to its last GPU
-- operation (start > 0), and its CUDA context: the range gpu_busy, gpu_gaps and
-- gpu_utilization cover. One row per trace, process and GPU.
--
-- depends: gpu_ops
--
-- @column trace_id    Trace.
-- @column pid         Process.
-- @column device_id   GPU.
-- @column first_ns    Start of the first GPU operation (ns).
-- @column last_ns     End of the last GPU operation (ns).
-- @column context_id  CUDA context of the operations (the smallest if several).
CREATE OR REPLACE VIEW gpu_active_range AS
SELECT trace_id, pid, device_id, min(start_ns) AS first_ns, max(end_ns) AS last_ns,
       min(context_id) AS context_id
FROM gpu_ops
WHERE start_ns > 0
GROUP BY ALL;
