-- steady_gpu_range: per process and GPU, the steady window (steady_state) clipped to the
-- process's active range on that GPU (gpu_active_range), in gpu_active_range's columns.
-- steady_utilization: GPU use over the steady state of each process (steady_gpu_range), in 100
-- chunks, for the trace page's utilization chart: start-up and warm-up, which can take
-- most of a trace's span, are left out (the page names them). Columns as
-- gpu_utilization_series.
--
-- depends: steady_state, gpu_active_range, gpu_utilization_within
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column context_id   CUDA context (as NVIDIA prints it).
-- @column first_ns     Start of the range: the later of the steady window's start and the GPU's first operation (ns).
-- @column last_ns      End of the range: the earlier of the window's end and the GPU's last operation (ns).
-- @column chunk        Chunk index, 0 .. 99.
-- @column start_ns     Start of the chunk (ns).
-- @column duration_ns  Its length (ns).
-- @column in_use_pct   Busy time / length x 100.
CREATE OR REPLACE VIEW steady_gpu_range AS
SELECT r.trace_id, r.pid, r.device_id, r.context_id,
       greatest(r.first_ns, s.start_ns) AS first_ns, least(r.last_ns, s.end_ns) AS last_ns
FROM gpu_active_range r
JOIN steady_state s ON s.trace_id = r.trace_id AND s.pid = r.pid
WHERE s.steps > 0 AND least(r.last_ns, s.end_ns) > greatest(r.first_ns, s.start_ns);

CREATE OR REPLACE VIEW steady_utilization AS
SELECT * FROM gpu_utilization_within('steady_gpu_range', 100);
