-- gpu_gaps_over(min_ns): every stretch of time a GPU sat idle for one process,
-- between its first and last operation: the gaps of the union of gpu_busy, longer
-- than min_ns. NVIDIA's nsys analyze gpu_gaps with gap=<min_ns / 1e6> ms.
-- gpu_gaps: the same with NVIDIA's default threshold, 500 ms.
--
-- depends: gpu_busy, gpu_active_range, intervals_gaps
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column context_id   CUDA context (as NVIDIA prints it).
-- @column start_ns     End of the busy time before the gap (ns).
-- @column end_ns       Start of the next busy time (ns).
-- @column duration_ns  end_ns - start_ns; reported when > min_ns.
CREATE OR REPLACE MACRO gpu_gaps_over(min_ns) AS TABLE
WITH busy AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'device_id': device_id} AS lane, start_ns, end_ns
    FROM gpu_busy
)
SELECT g.lane.trace_id, g.lane.pid, g.lane.device_id, r.context_id,
       g.start_ns, g.end_ns, g.end_ns - g.start_ns AS duration_ns
FROM intervals_gaps(busy) g
JOIN gpu_active_range r
  ON r.trace_id = g.lane.trace_id AND r.pid = g.lane.pid AND r.device_id = g.lane.device_id
WHERE g.end_ns - g.start_ns > min_ns;

-- gpu_gaps: (columns above)
CREATE OR REPLACE VIEW gpu_gaps AS
SELECT * FROM gpu_gaps_over(500000000);
