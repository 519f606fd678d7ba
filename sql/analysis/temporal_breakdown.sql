-- temporal_breakdown: where a rank's GPU time goes between its first and last GPU
-- operation, HTA's temporal breakdown: idle time (no operation on any stream), compute
-- (time covered by compute kernels), non-compute (busy but not computing:
-- communication, copies, memsets that no compute kernel overlaps). Unions over all
-- streams and GPUs of the process. One row per trace and process (rank).
-- temporal_breakdown_by_device: the same per GPU.
-- temporal_breakdown_hta: the same computed the way HTA does, for comparisons: each
-- operation's start rounded up and its end rounded down to whole microseconds (HTA's
-- workaround for overlapping ns-resolution events, which adds up to 2 us of idle time
-- per operation), and, when the trace has two or more ProfilerStep ranges, only the
-- operations whose launching API call started by the end of the last one; and HTA
-- counts CPU operators that carry a 'stream' argument (torch.compile's Triton kernel
-- launchers) as compute kernels, which inflates compute on compiled models.
--
-- depends: gpu_op_class, traces, api, annotations, cpu_ops
--
-- @column trace_id            Trace.
-- @column rank                Distributed rank (NULL when the trace does not say).
-- @column pid                 Process.
-- @column device_id           GPU (temporal_breakdown_by_device only).
-- @column span_ns             Last end - first start of the GPU operations (ns).
-- @column busy_ns             Time with at least one operation running (ns).
-- @column idle_ns             span_ns - busy_ns.
-- @column compute_ns          Time with at least one compute kernel running (ns).
-- @column non_compute_ns      busy_ns - compute_ns: busy without compute (ns).
-- @column communication_ns    Time with at least one communication kernel running (ns),
--                             overlapped by compute or not.
-- @column memcpy_ns           Time with at least one memcpy or memset running (ns).
-- @column idle_pct            idle_ns / span_ns x 100.
-- @column compute_pct         compute_ns / span_ns x 100.
-- @column non_compute_pct     non_compute_ns / span_ns x 100.
-- @column communication_pct   communication_ns / span_ns x 100.
-- @column memcpy_pct          memcpy_ns / span_ns x 100.
-- gpu_class_union_ns(grain, hta_mode): per process (grain 'process') or GPU ('device'):
-- first and last GPU operation, and how long operations of each set of classes ran
-- (the length of the union of their intervals): busy_ns (any), compute_ns,
-- communication_ns, memcpy_ns (memcpy or memset), communication_or_compute_ns,
-- memcpy_or_compute_ns. hta_mode: as in temporal_breakdown_hta.
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
ops AS (
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
ordered AS (
    SELECT *, max(end_ns) OVER (
                  PARTITION BY trace_id, pid, device_id, class_set ORDER BY start_ns, end_ns
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS covered_until_ns
    FROM sets
)
SELECT trace_id, pid, device_id,
       min(start_ns) FILTER (WHERE class_set = 'all') AS first_ns,
       max(end_ns) FILTER (WHERE class_set = 'all') AS last_ns,
       sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'all') AS busy_ns,
       coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'compute'), 0) AS compute_ns,
       coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'communication'), 0) AS communication_ns,
       coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'memory'), 0) AS memcpy_ns,
       coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'communication_or_compute'), 0) AS communication_or_compute_ns,
       coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(covered_until_ns, start_ns))))
           FILTER (WHERE class_set = 'memory_or_compute'), 0) AS memcpy_or_compute_ns
FROM ordered
GROUP BY trace_id, pid, device_id;

CREATE OR REPLACE MACRO _temporal_breakdown(grain, hta_mode) AS TABLE
SELECT u.trace_id, t.rank, u.pid, u.device_id,
       u.last_ns - u.first_ns AS span_ns,
       CAST(u.busy_ns AS BIGINT) AS busy_ns,
       CAST(u.last_ns - u.first_ns - u.busy_ns AS BIGINT) AS idle_ns,
       CAST(u.compute_ns AS BIGINT) AS compute_ns,
       CAST(u.busy_ns - u.compute_ns AS BIGINT) AS non_compute_ns,
       CAST(u.communication_ns AS BIGINT) AS communication_ns,
       CAST(u.memcpy_ns AS BIGINT) AS memcpy_ns,
       100.0 * (u.last_ns - u.first_ns - u.busy_ns) / nullif(u.last_ns - u.first_ns, 0) AS idle_pct,
       100.0 * u.compute_ns / nullif(u.last_ns - u.first_ns, 0) AS compute_pct,
       100.0 * (u.busy_ns - u.compute_ns) / nullif(u.last_ns - u.first_ns, 0) AS non_compute_pct,
       100.0 * u.communication_ns / nullif(u.last_ns - u.first_ns, 0) AS communication_pct,
       100.0 * u.memcpy_ns / nullif(u.last_ns - u.first_ns, 0) AS memcpy_pct
FROM gpu_class_union_ns(grain, hta_mode) u
JOIN traces t USING (trace_id);

CREATE OR REPLACE VIEW temporal_breakdown AS
SELECT * EXCLUDE (device_id) FROM _temporal_breakdown('process', false);

CREATE OR REPLACE VIEW temporal_breakdown_by_device AS
SELECT * FROM _temporal_breakdown('device', false);

CREATE OR REPLACE VIEW temporal_breakdown_hta AS
SELECT * EXCLUDE (device_id) FROM _temporal_breakdown('process', true);
