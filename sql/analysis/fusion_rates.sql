-- fusion_rates: what a fused kernel would cost on this trace's GPU, measured on the trace's
-- own kernels (never a datasheet number): the memory bandwidth its streaming kernels achieve,
-- and the fixed cost of one kernel. One row per trace and GPU with modelled calls.
--
-- Streaming kernels: elementwise operator calls (op_efficiency, category 'elementwise') that ran
-- as one kernel and moved at least 1 MiB; stream_tbps is the median of their achieved bandwidth
-- (bytes / device time). Without such calls, the median over all bytes-only calls (norms,
-- softmax, reductions) of that size; NULL when there are none.
-- One launch: the median device time of bytes-only calls that ran as one kernel and moved under
-- 64 KiB (their time is the kernel's fixed cost, not its bytes); without such calls, the
-- shortest kernel of the trace on that GPU.
--
-- depends: op_efficiency, kernels
-- materialize: per trace
--
-- @column trace_id          Trace.
-- @column device_id         GPU.
-- @column stream_tbps       Bandwidth of the streaming kernels (TB/s).
-- @column streaming_calls   Calls behind stream_tbps.
-- @column launch_ns         Fixed cost of one kernel (ns).
CREATE OR REPLACE VIEW fusion_rates AS
WITH calls AS (
    SELECT trace_id, device_id, category, bytes, device_ns, bytes / device_ns / 1e3 AS tbps
    FROM op_efficiency
    WHERE model = 'bytes' AND kernels = 1 AND bytes IS NOT NULL AND device_ns > 0
),
streaming AS (
    SELECT trace_id, device_id,
           coalesce(median(tbps) FILTER (WHERE category = 'elementwise' AND bytes >= 1048576),
                    median(tbps) FILTER (WHERE bytes >= 1048576)) AS stream_tbps,
           CASE WHEN count(*) FILTER (WHERE category = 'elementwise' AND bytes >= 1048576) > 0
                THEN count(*) FILTER (WHERE category = 'elementwise' AND bytes >= 1048576)
                ELSE count(*) FILTER (WHERE bytes >= 1048576) END AS streaming_calls,
           median(device_ns) FILTER (WHERE bytes < 65536) AS small_ns
    FROM calls
    GROUP BY ALL
),
shortest AS (
    SELECT trace_id, device_id, min(duration_ns) AS shortest_ns FROM kernels GROUP BY ALL
)
SELECT s.trace_id, s.device_id, s.stream_tbps, s.streaming_calls,
       CAST(coalesce(s.small_ns, k.shortest_ns) AS BIGINT) AS launch_ns
FROM streaming s
LEFT JOIN shortest k USING (trace_id, device_id);
