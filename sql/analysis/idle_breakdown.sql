-- idle_breakdown_over(kernel_wait_max_ns): every idle gap on a stream, between one GPU
-- operation's end and the next one's start, classified by its likely cause (HTA's
-- idle time breakdown):
--   'host_wait'   the API call that launched the next operation began after the
--                 previous one had finished: the CPU did not enqueue work in time;
--   'kernel_wait' otherwise, when the gap is shorter than kernel_wait_max_ns: the
--                 normal launch overhead between back-to-back kernels;
--   'other'       anything else (waits on other streams, events, the host...).
-- idle_breakdown: the same with kernel_wait_max_ns = 30,000 ns (30 us: HTA's default
-- 'consecutive_kernel_delay = 30', which HTA documents as ns but compares with us).
--
-- depends: gpu_ops, api, intervals_gaps
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column start_ns        End of the previous operation on the stream (ns).
-- @column end_ns          Start of the next operation (ns).
-- @column duration_ns     end_ns - start_ns (> 0).
-- @column cause           'host_wait', 'kernel_wait' or 'other'.
-- @column next_op         Name of the operation after the gap.
-- @column launch_start_ns When the API call that launched the next operation began (ns).
CREATE OR REPLACE MACRO idle_breakdown_over(kernel_wait_max_ns) AS TABLE
WITH ops AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'device_id': device_id, 'stream_id': stream_id} AS lane,
           start_ns, end_ns, name, correlation_id
    FROM gpu_ops
),
ended_by AS (
    -- the operation that ends each gap: the first to start at its end (the shortest if several)
    SELECT g.lane, g.start_ns, g.end_ns, o.name, a.start_ns AS launch_start_ns
    FROM intervals_gaps(ops) g
    JOIN ops o ON o.lane IS NOT DISTINCT FROM g.lane AND o.start_ns = g.end_ns
    LEFT JOIN api a ON a.trace_id = g.lane.trace_id AND a.pid = g.lane.pid
                   AND a.correlation_id = o.correlation_id
    QUALIFY row_number() OVER (PARTITION BY g.lane, g.start_ns ORDER BY o.end_ns, a.start_ns) = 1
)
SELECT lane.trace_id, lane.pid, lane.device_id, lane.stream_id,
       start_ns, end_ns, end_ns - start_ns AS duration_ns,
       CASE WHEN launch_start_ns > start_ns THEN 'host_wait'
            WHEN end_ns - start_ns < kernel_wait_max_ns THEN 'kernel_wait'
            ELSE 'other' END AS cause,
       name AS next_op, launch_start_ns
FROM ended_by;

-- idle_breakdown: (see idle_breakdown_over)
CREATE OR REPLACE VIEW idle_breakdown AS
SELECT * FROM idle_breakdown_over(30000);

-- idle_breakdown_by_stream: idle time per stream and cause, with each cause's share of
-- the stream's idle time.
--
-- @column gap_count   Number of gaps.
-- @column idle_ns     Sum of their durations (ns).
-- @column idle_pct    idle_ns as a percentage of the stream's idle time.
CREATE OR REPLACE VIEW idle_breakdown_by_stream AS
SELECT trace_id, pid, device_id, stream_id, cause,
       count(*) AS gap_count,
       CAST(sum(duration_ns) AS BIGINT) AS idle_ns,
       100.0 * sum(duration_ns)
           / sum(sum(duration_ns)) OVER (PARTITION BY trace_id, pid, device_id, stream_id) AS idle_pct
FROM idle_breakdown
GROUP BY trace_id, pid, device_id, stream_id, cause;

-- idle_breakdown_by_device: the same summed over the streams of each GPU (stream gaps
-- overlap in time, so this is stream-time, not wall time; see temporal_breakdown).
CREATE OR REPLACE VIEW idle_breakdown_by_device AS
SELECT trace_id, pid, device_id, cause,
       count(*) AS gap_count,
       CAST(sum(duration_ns) AS BIGINT) AS idle_ns,
       100.0 * sum(duration_ns)
           / sum(sum(duration_ns)) OVER (PARTITION BY trace_id, pid, device_id) AS idle_pct
FROM idle_breakdown
GROUP BY trace_id, pid, device_id, cause;
