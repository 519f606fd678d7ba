-- idle_cause_summary: why a trace's GPU streams sat idle, per cause (the trace page's
-- "Why the GPU waits" table): the gaps of idle_breakdown summed over every process, GPU
-- and stream of the trace. Stream time: gaps on concurrent streams overlap in time, so
-- idle_ns can exceed the trace's wall time (temporal_breakdown has the wall-time share).
-- One row per trace and cause.
--
-- depends: idle_breakdown_by_device
--
-- @column trace_id  Trace.
-- @column cause     'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column gaps      Number of gaps between operations on a stream.
-- @column idle_ns   Sum of their durations (ns, stream time).
CREATE OR REPLACE VIEW idle_cause_summary AS
SELECT trace_id, cause, CAST(sum(gap_count) AS BIGINT) AS gaps, CAST(sum(idle_ns) AS BIGINT) AS idle_ns
FROM idle_breakdown_by_device
GROUP BY trace_id, cause;
