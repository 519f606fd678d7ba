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
--
-- depends: gpu_op_class, api, annotations, cpu_ops, intervals_union_ns
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
    WHERE hta_mode AND json_extract(args_json, '$.stream') IS NOT NULL
),
sets AS (
    SELECT *, 'all' AS class_set FROM ops
    UNION ALL SELECT *, 'compute' FROM ops WHERE op_class = 'compute'
    UNION ALL SELECT *, 'communication' FROM ops WHERE op_class = 'communication'
    UNION ALL SELECT *, 'memory' FROM ops WHERE op_class IN ('memcpy', 'memset')
    UNION ALL SELECT *, 'communication_or_compute' FROM ops WHERE op_class IN ('communication', 'compute')
    UNION ALL SELECT *, 'memory_or_compute' FROM ops WHERE op_class IN ('memcpy', 'memset', 'compute')
),
laned AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'device_id': device_id, 'class_set': class_set} AS lane,
           start_ns, end_ns
    FROM sets
),
covered AS (
    SELECT lane.trace_id, lane.pid, lane.device_id, lane.class_set, covered_ns
    FROM intervals_union_ns(laned)
),
spans AS (
    SELECT trace_id, pid, device_id, min(start_ns) AS first_ns, max(end_ns) AS last_ns
    FROM ops
    GROUP BY ALL
)
SELECT s.trace_id, s.pid, s.device_id, s.first_ns, s.last_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'all'), 0) AS busy_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'compute'), 0) AS compute_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'communication'), 0) AS communication_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'memory'), 0) AS memcpy_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'communication_or_compute'), 0)
           AS communication_or_compute_ns,
       coalesce(sum(c.covered_ns) FILTER (WHERE c.class_set = 'memory_or_compute'), 0) AS memcpy_or_compute_ns
FROM spans s
LEFT JOIN covered c ON c.trace_id = s.trace_id AND c.pid = s.pid
                   AND c.device_id IS NOT DISTINCT FROM s.device_id
GROUP BY s.trace_id, s.pid, s.device_id, s.first_ns, s.last_ns;
