-- idle_breakdown_over(kernel_wait_max_ns): every idle gap on a stream, between one GPU
-- operation's end and the next one's start, with its likely cause (HTA's idle time
-- breakdown; the vocabulary is idle_cause's): 'host_wait' (the next operation was
-- launched only after the stream went idle), 'kernel_wait' (launched in time, gap
-- shorter than kernel_wait_max_ns), 'other', or 'in_graph' (both operations belong to
-- one CUDA graph replay: never a host wait).
-- idle_breakdown: the same with idle_cause's default, kernel_wait_max_ns = 30,000 ns.
--
-- depends: gpu_ops, api, intervals_after_gaps, idle_cause, graph_launches
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column start_ns        End of the previous operation on the stream (ns).
-- @column end_ns          Start of the next operation (ns).
-- @column duration_ns     end_ns - start_ns (> 0).
-- @column cause           'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column next_op         Name of the operation after the gap.
-- @column launch_start_ns When the API call that launched the next operation began (ns).
CREATE OR REPLACE MACRO idle_breakdown_over(kernel_wait_max_ns) AS TABLE
WITH ops AS (
    SELECT {'trace_id': o.trace_id, 'pid': o.pid, 'device_id': o.device_id, 'stream_id': o.stream_id} AS lane,
           o.start_ns, o.end_ns, o.name, a.start_ns AS launch_start_ns, o.correlation_id,
           g.correlation_id IS NOT NULL AS is_replay
    FROM gpu_ops o
    LEFT JOIN api a ON a.trace_id = o.trace_id AND a.pid = o.pid
                   AND a.correlation_id = o.correlation_id
    LEFT JOIN graph_launches g ON g.trace_id = o.trace_id AND g.pid = o.pid
                              AND g.correlation_id = o.correlation_id
),
after AS (
    SELECT * FROM intervals_after_gaps(ops)
),
in_graph AS (
    -- gaps between two operations of one replay: one that ended at the gap start shares
    -- the graph launch call of the operation that ended the gap
    SELECT a.lane, a.gap_start_ns
    FROM after a
    SEMI JOIN ops p ON p.lane = a.lane AND p.end_ns = a.gap_start_ns AND p.correlation_id = a.correlation_id
    WHERE a.is_replay
)
SELECT a.lane.trace_id, a.lane.pid, a.lane.device_id, a.lane.stream_id,
       a.gap_start_ns AS start_ns, a.start_ns AS end_ns, a.start_ns - a.gap_start_ns AS duration_ns,
       idle_cause(a.launch_start_ns, a.gap_start_ns, a.start_ns - a.gap_start_ns, kernel_wait_max_ns,
                  i.gap_start_ns IS NOT NULL) AS cause,
       a.name AS next_op, a.launch_start_ns
FROM after a
LEFT JOIN in_graph i ON i.lane = a.lane AND i.gap_start_ns = a.gap_start_ns;

-- idle_breakdown: (see idle_breakdown_over)
CREATE OR REPLACE VIEW idle_breakdown AS
SELECT * FROM idle_breakdown_over(idle_cause_kernel_wait_max_ns());

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
