-- gpu_class_union_ns(grain, hta_mode): per process (grain 'process') or GPU ('device'):
-- first and last GPU operation, and how long operations of each set of classes ran
-- (the length of the union of their intervals, over all streams). One row per trace,
-- process and (grain 'device') GPU; device_id is NULL for grain 'process'. The shared
-- input of temporal_breakdown and overlap. hta_mode: computed as HTA does (see
-- temporal_breakdown_hta): times rounded to whole us (start up, end down), operations
-- launched after the last ProfilerStep dropped, and CPU operators with a 'stream'
-- argument counted as compute.
--   first_ns, last_ns      first start and last end of the GPU operations (ns);
--   busy_ns                union length of all operations (ns);
--   compute_ns, communication_ns, memcpy_ns (memcpy or memset),
--   communication_or_compute_ns, memcpy_or_compute_ns: union length of each set (ns).
-- Computed in one sweep over the operations' starts and ends per process or GPU (the
-- union of a set is the time in which at least one of its operations runs); intervals
-- as in lib/intervals.sql: closed-open, those with a NULL start or end < start ignored.
--
-- depends: gpu_op_class, api, annotations, cpu_ops
CREATE OR REPLACE MACRO gpu_class_union_ns(grain, hta_mode) AS TABLE
WITH last_step AS (
    SELECT trace_id, max(end_ns) AS end_ns
    FROM annotations
    WHERE NOT is_gpu AND name LIKE 'ProfilerStep#%'
    GROUP BY trace_id
    HAVING count(DISTINCT name) >= 2
),
hta_dropped AS (
    -- operations HTA drops: not launched by an API call that started by the last step's end
    SELECT o.trace_id, o.pid, o.correlation_id
    FROM gpu_op_class o
    JOIN last_step s USING (trace_id)
    WHERE NOT EXISTS (SELECT 1 FROM api a
                      WHERE a.trace_id = o.trace_id AND a.pid = o.pid
                        AND a.correlation_id = o.correlation_id AND a.start_ns <= s.end_ns)
),
ops AS MATERIALIZED (
    SELECT trace_id, pid, CASE WHEN grain = 'device' THEN device_id END AS device_id,
           CASE WHEN hta_mode THEN CAST(ceil(start_ns / 1000) * 1000 AS BIGINT) ELSE start_ns END AS start_ns,
           CASE WHEN hta_mode THEN CAST(floor(end_ns / 1000) * 1000 AS BIGINT) ELSE end_ns END AS end_ns,
           op_class
    FROM gpu_op_class o
    WHERE NOT hta_mode
       OR NOT EXISTS (SELECT 1 FROM hta_dropped d
                      WHERE d.trace_id = o.trace_id AND d.pid = o.pid
                        AND d.correlation_id IS NOT DISTINCT FROM o.correlation_id)
    UNION ALL
    -- HTA takes every event with a 'stream' argument for GPU work: also the CPU-side
    -- launcher ops of torch.compile's Triton kernels, whose CPU time it counts as compute
    SELECT trace_id, pid, NULL, CAST(ceil(start_ns / 1000) * 1000 AS BIGINT),
           CAST(floor(end_ns / 1000) * 1000 AS BIGINT), 'compute'
    FROM cpu_ops
    -- (contains() first: it spares parsing the arguments of every other operator)
    WHERE hta_mode AND contains(args_json, 'stream') AND json_extract(args_json, '$.stream') IS NOT NULL
),
edges AS (
    -- the sweep: each valid operation opens (+1) at its start and closes (-1) at its end.
    -- One running sum counts the operations running per class at once: the count of all
    -- of them in bits 0-31, of compute in bits 32-63, communication 64-95, memcpy or
    -- memset 96-127 (each count is >= 0 and < 2^31 wherever the sum is read)
    SELECT trace_id, pid, device_id, ts, sum(d * unit) AS d
    FROM (SELECT trace_id, pid, device_id, start_ns AS ts, 1 AS d, op_class
          FROM ops WHERE start_ns IS NOT NULL AND end_ns >= start_ns
          UNION ALL
          SELECT trace_id, pid, device_id, end_ns, -1, op_class
          FROM ops WHERE start_ns IS NOT NULL AND end_ns >= start_ns)
    CROSS JOIN LATERAL (
        SELECT 1 + CASE WHEN op_class = 'compute' THEN 1::HUGEINT << 32
                        WHEN op_class = 'communication' THEN 1::HUGEINT << 64
                        WHEN op_class IN ('memcpy', 'memset') THEN 1::HUGEINT << 96
                        ELSE 0 END AS unit)
    GROUP BY trace_id, pid, device_id, ts
),
levels AS (
    -- each stretch between two consecutive times of a lane, with how many operations of
    -- each class run in it
    SELECT trace_id, pid, device_id, length_ns,
           running & 4294967295 AS n_all,
           (running >> 32) & 4294967295 AS n_compute,
           (running >> 64) & 4294967295 AS n_communication,
           running >> 96 AS n_memory
    FROM (SELECT trace_id, pid, device_id,
                 lead(ts) OVER (PARTITION BY trace_id, pid, device_id ORDER BY ts) - ts AS length_ns,
                 sum(d) OVER (PARTITION BY trace_id, pid, device_id ORDER BY ts ROWS UNBOUNDED PRECEDING)
                     AS running
          FROM edges)
),
covered AS (
    -- a set's union length: the stretches in which one of its operations runs
    SELECT trace_id, pid, device_id,
           sum(length_ns) FILTER (WHERE n_all > 0) AS busy_ns,
           sum(length_ns) FILTER (WHERE n_compute > 0) AS compute_ns,
           sum(length_ns) FILTER (WHERE n_communication > 0) AS communication_ns,
           sum(length_ns) FILTER (WHERE n_memory > 0) AS memcpy_ns,
           sum(length_ns) FILTER (WHERE n_communication > 0 OR n_compute > 0) AS communication_or_compute_ns,
           sum(length_ns) FILTER (WHERE n_memory > 0 OR n_compute > 0) AS memcpy_or_compute_ns
    FROM levels
    WHERE length_ns IS NOT NULL
    GROUP BY ALL
),
spans AS (
    SELECT trace_id, pid, device_id, min(start_ns) AS first_ns, max(end_ns) AS last_ns
    FROM ops
    GROUP BY ALL
)
SELECT s.trace_id, s.pid, s.device_id, s.first_ns, s.last_ns,
       coalesce(c.busy_ns, 0) AS busy_ns,
       coalesce(c.compute_ns, 0) AS compute_ns,
       coalesce(c.communication_ns, 0) AS communication_ns,
       coalesce(c.memcpy_ns, 0) AS memcpy_ns,
       coalesce(c.communication_or_compute_ns, 0) AS communication_or_compute_ns,
       coalesce(c.memcpy_or_compute_ns, 0) AS memcpy_or_compute_ns
FROM spans s
LEFT JOIN covered c ON c.trace_id = s.trace_id AND c.pid = s.pid
                   AND c.device_id IS NOT DISTINCT FROM s.device_id;
