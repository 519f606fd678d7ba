-- gpu_gaps_over(min_ns): every stretch of time a GPU sat idle for one process,
-- between its first and last operation: the gaps of the union of gpu_busy, longer
-- than min_ns. NVIDIA's nsys analyze gpu_gaps with gap=<min_ns / 1e6> ms.
-- gpu_gaps: the same with NVIDIA's default threshold, 500 ms.
--
-- depends: gpu_busy, gpu_active_range
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column context_id   CUDA context (as NVIDIA prints it).
-- @column start_ns     End of the busy time before the gap (ns).
-- @column end_ns       Start of the next busy time (ns).
-- @column duration_ns  end_ns - start_ns; reported when > min_ns.
CREATE OR REPLACE MACRO gpu_gaps_over(min_ns) AS TABLE
WITH ordered AS (
    SELECT trace_id, pid, device_id, start_ns,
           max(end_ns) OVER (
               PARTITION BY trace_id, pid, device_id
               ORDER BY start_ns, end_ns
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS busy_until_ns
    FROM gpu_busy
)
SELECT o.trace_id, o.pid, o.device_id, r.context_id,
       o.busy_until_ns AS start_ns,
       o.start_ns AS end_ns,
       o.start_ns - o.busy_until_ns AS duration_ns
FROM ordered o
JOIN gpu_active_range r USING (trace_id, pid, device_id)
WHERE o.start_ns - o.busy_until_ns > min_ns;

-- gpu_gaps: (columns above)
CREATE OR REPLACE VIEW gpu_gaps AS
SELECT * FROM gpu_gaps_over(500000000);
