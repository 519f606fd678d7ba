-- overlap: what runs at the same time, per rank (process): how much communication
-- is hidden behind compute (HTA's comm/comp overlap), how much copying is, and how
-- long two or more streams were busy at once. One row per trace and process.
--
-- depends: gpu_class_union_ns, gpu_ops, traces, intervals_union, intervals_overlap_count
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
WITH ops AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'device_id': device_id, 'stream_id': stream_id} AS lane,
           start_ns, end_ns
    FROM gpu_ops
),
stream_busy AS (
    -- each stream's busy stretches, counted together per process
    SELECT {'trace_id': lane.trace_id, 'pid': lane.pid} AS lane, start_ns, end_ns
    FROM intervals_union(ops)
),
multi AS (
    SELECT lane.trace_id, lane.pid, sum(end_ns - start_ns) AS multi_stream_ns
    FROM intervals_overlap_count(stream_busy)
    WHERE overlap_count >= 2
    GROUP BY ALL
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
