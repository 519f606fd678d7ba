-- idle_breakdown_over(kernel_wait_max_ns): every idle gap on a stream, between one GPU
-- operation's end and the next one's start, classified by its likely cause (HTA's
-- idle time breakdown):
--   'host_wait'   the API call that launched the next operation began after the
--                 previous one had finished: the CPU did not enqueue work in time;
--   'kernel_wait' otherwise, when the gap is shorter than kernel_wait_max_ns: the
--                 normal launch overhead between back-to-back kernels;
--   'other'       anything else (waits on other streams, events, the host...);
--   'in_graph'    both operations belong to one CUDA graph replay (same graph launch
--                 call): the GPU followed the graph's own dependencies, the host had
--                 no part in the gap (checked first).
-- idle_breakdown: the same with kernel_wait_max_ns = 30,000 ns (30 us: HTA's default
-- 'consecutive_kernel_delay = 30', which HTA documents as ns but compares with us).
--
-- depends: gpu_ops, api, graph_launches
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column start_ns        End of the previous operation on the stream (ns).
-- @column end_ns          Start of the next operation (ns).
-- @column duration_ns     end_ns - start_ns (> 0).
-- @column cause           'host_wait', 'kernel_wait', 'other' or 'in_graph'.
-- @column next_op         Name of the operation after the gap.
-- @column launch_start_ns When the API call that launched the next operation began (ns).
CREATE OR REPLACE MACRO idle_breakdown_over(kernel_wait_max_ns) AS TABLE
WITH ordered AS (
    SELECT o.trace_id, o.pid, o.device_id, o.stream_id, o.start_ns, o.name,
           a.start_ns AS launch_start_ns,
           max(o.end_ns) OVER stream_before AS prev_end_ns,
           g.correlation_id IS NOT NULL
               AND lag(o.correlation_id) OVER (PARTITION BY o.trace_id, o.pid, o.device_id, o.stream_id
                                               ORDER BY o.start_ns, o.end_ns) = o.correlation_id AS in_graph
    FROM gpu_ops o
    LEFT JOIN api a ON a.trace_id = o.trace_id AND a.pid = o.pid
                   AND a.correlation_id = o.correlation_id
    LEFT JOIN graph_launches g ON g.trace_id = o.trace_id AND g.pid = o.pid
                              AND g.correlation_id = o.correlation_id
    WINDOW stream_before AS (PARTITION BY o.trace_id, o.pid, o.device_id, o.stream_id
                             ORDER BY o.start_ns, o.end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
)
SELECT trace_id, pid, device_id, stream_id,
       prev_end_ns AS start_ns, start_ns AS end_ns, start_ns - prev_end_ns AS duration_ns,
       CASE WHEN in_graph THEN 'in_graph'
            WHEN launch_start_ns > prev_end_ns THEN 'host_wait'
            WHEN start_ns - prev_end_ns < kernel_wait_max_ns THEN 'kernel_wait'
            ELSE 'other' END AS cause,
       name AS next_op, launch_start_ns
FROM ordered
WHERE start_ns > prev_end_ns;

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
