-- overlap: what runs at the same time, per rank (process): how much communication
-- is hidden behind compute (HTA's comm/comp overlap), how much copying is, and how
-- long two or more streams were busy at once. One row per trace and process.
--
-- depends: gpu_class_union_ns, gpu_ops, traces
--
-- @column trace_id                  Trace.
-- @column rank                      Distributed rank (NULL when unknown).
-- @column pid                       Process.
-- @column communication_ns          Time with communication kernels running (ns).
-- @column communication_overlap_ns  Part of it during which compute ran too (ns).
-- @column communication_overlap_pct communication_overlap_ns / communication_ns x 100
--                                   (HTA's comp_comm_overlap_pctg); NULL without
--                                   communication.
-- @column memcpy_ns                 Time with memcpy/memset running (ns).
-- @column memcpy_overlap_ns         Part of it during which compute ran too (ns).
-- @column memcpy_overlap_pct        memcpy_overlap_ns / memcpy_ns x 100.
-- @column multi_stream_ns           Time with operations on two or more streams at once (ns).
-- @column multi_stream_pct          multi_stream_ns / busy time x 100.
CREATE OR REPLACE VIEW overlap AS
WITH per_stream AS (
    -- each stream's busy intervals, merged
    SELECT trace_id, pid, device_id, stream_id, start_ns, end_ns,
           max(end_ns) OVER (PARTITION BY trace_id, pid, device_id, stream_id ORDER BY start_ns, end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end_ns
    FROM gpu_ops
),
islands AS (
    SELECT *, sum(CASE WHEN prev_end_ns >= start_ns THEN 0 ELSE 1 END) OVER (
                  PARTITION BY trace_id, pid, device_id, stream_id ORDER BY start_ns, end_ns) AS island
    FROM per_stream
),
merged AS (
    SELECT trace_id, pid, min(start_ns) AS start_ns, max(end_ns) AS end_ns
    FROM islands
    GROUP BY trace_id, pid, device_id, stream_id, island
),
edges AS (
    SELECT trace_id, pid, start_ns AS ts, 1 AS delta FROM merged
    UNION ALL
    SELECT trace_id, pid, end_ns, -1 FROM merged
),
levels AS (
    SELECT trace_id, pid, ts,
           sum(delta) OVER (PARTITION BY trace_id, pid ORDER BY ts, delta
                            ROWS UNBOUNDED PRECEDING) AS busy_streams,
           lead(ts) OVER (PARTITION BY trace_id, pid ORDER BY ts, delta) AS next_ts
    FROM edges
),
multi AS (
    SELECT trace_id, pid, sum(next_ts - ts) AS multi_stream_ns
    FROM levels
    WHERE busy_streams >= 2
    GROUP BY trace_id, pid
),
unions AS (
    SELECT * FROM gpu_class_union_ns('process', false)
)
SELECT u.trace_id, t.rank, u.pid,
       CAST(u.communication_ns AS BIGINT) AS communication_ns,
       CAST(u.communication_ns + u.compute_ns - u.communication_or_compute_ns AS BIGINT)
           AS communication_overlap_ns,
       100.0 * (u.communication_ns + u.compute_ns - u.communication_or_compute_ns)
           / nullif(u.communication_ns, 0) AS communication_overlap_pct,
       CAST(u.memcpy_ns AS BIGINT) AS memcpy_ns,
       CAST(u.memcpy_ns + u.compute_ns - u.memcpy_or_compute_ns AS BIGINT) AS memcpy_overlap_ns,
       100.0 * (u.memcpy_ns + u.compute_ns - u.memcpy_or_compute_ns) / nullif(u.memcpy_ns, 0)
           AS memcpy_overlap_pct,
       CAST(coalesce(m.multi_stream_ns, 0) AS BIGINT) AS multi_stream_ns,
       100.0 * coalesce(m.multi_stream_ns, 0) / nullif(u.busy_ns, 0) AS multi_stream_pct
FROM unions u
JOIN traces t USING (trace_id)
LEFT JOIN multi m USING (trace_id, pid);
