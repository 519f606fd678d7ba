-- steps_matching(pattern): per training iteration: the CPU-side ranges whose name
-- matches the regular expression `pattern` (ProfilerStep#N, or NVTX/annotation ranges
-- the user names), with what the GPU did during each: the GPU operations of the same
-- process, clipped to the step's time window, split by class. One row per step.
-- steps: the same for names like 'ProfilerStep#12', 'step 3', 'step_3'.
--
-- depends: nvtx_ranges, gpu_op_class, cpu_ops, traces, intervals_union_ns
--
-- @column trace_id          Trace.
-- @column rank              Distributed rank (NULL when unknown).
-- @column pid               Process.
-- @column step              Range name.
-- @column step_index        Order of the step in its process (0 = first).
-- @column start_ns          Step start (ns).
-- @column end_ns            Step end (ns).
-- @column wall_ns           end_ns - start_ns.
-- @column gpu_busy_ns       Time in the step with any GPU operation running (ns).
-- @column gpu_idle_ns       wall_ns - gpu_busy_ns.
-- @column gpu_idle_pct      gpu_idle_ns / wall_ns x 100.
-- @column compute_ns        Time with compute kernels running (ns).
-- @column communication_ns  Time with communication kernels running (ns).
-- @column memcpy_ns         Time with memcpy or memset running (ns).
-- @column dataloader_ns     Time in DataLoader iteration on the CPU (PyTorch
--                           'enumerate(DataLoader)#...__next__' ops) (ns).
CREATE OR REPLACE MACRO steps_matching(pattern) AS TABLE
WITH s AS (
    SELECT trace_id, pid, range AS step, start_ns, end_ns, annotation_id,
           row_number() OVER (PARTITION BY trace_id, pid ORDER BY start_ns) - 1 AS step_index
    FROM nvtx_ranges
    WHERE regexp_matches(regexp_replace(range, '^[^:]*:', ''), pattern, 'i')
),
clipped AS (
    SELECT s.trace_id, s.pid, s.annotation_id, o.op_class,
           greatest(o.start_ns, s.start_ns) AS start_ns, least(o.end_ns, s.end_ns) AS end_ns
    FROM s
    JOIN gpu_op_class o ON o.trace_id = s.trace_id AND o.pid = s.pid
                       AND o.start_ns < s.end_ns AND o.end_ns > s.start_ns
),
sets AS (
    SELECT *, 'all' AS class_set FROM clipped
    UNION ALL SELECT *, 'compute' FROM clipped WHERE op_class = 'compute'
    UNION ALL SELECT *, 'communication' FROM clipped WHERE op_class = 'communication'
    UNION ALL SELECT *, 'memory' FROM clipped WHERE op_class IN ('memcpy', 'memset')
),
laned AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'annotation_id': annotation_id, 'class_set': class_set} AS lane,
           start_ns, end_ns
    FROM sets
),
busy AS (
    SELECT lane.trace_id, lane.pid, lane.annotation_id, lane.class_set, covered_ns AS ns
    FROM intervals_union_ns(laned)
),
loader AS (
    SELECT s.trace_id, s.pid, s.annotation_id,
           sum(least(c.end_ns, s.end_ns) - greatest(c.start_ns, s.start_ns)) AS ns
    FROM s
    JOIN cpu_ops c ON c.trace_id = s.trace_id AND c.pid = s.pid
                  AND c.start_ns < s.end_ns AND c.end_ns > s.start_ns
    WHERE c.name LIKE 'enumerate(DataLoader)#%' OR c.name LIKE 'enumerate(DataPipe)#%'
    GROUP BY ALL
)
SELECT s.trace_id, t.rank, s.pid, s.step, s.step_index, s.start_ns, s.end_ns,
       s.end_ns - s.start_ns AS wall_ns,
       CAST(coalesce(b_all.ns, 0) AS BIGINT) AS gpu_busy_ns,
       CAST(s.end_ns - s.start_ns - coalesce(b_all.ns, 0) AS BIGINT) AS gpu_idle_ns,
       100.0 * (s.end_ns - s.start_ns - coalesce(b_all.ns, 0)) / nullif(s.end_ns - s.start_ns, 0) AS gpu_idle_pct,
       CAST(coalesce(b_comp.ns, 0) AS BIGINT) AS compute_ns,
       CAST(coalesce(b_comm.ns, 0) AS BIGINT) AS communication_ns,
       CAST(coalesce(b_mem.ns, 0) AS BIGINT) AS memcpy_ns,
       CAST(coalesce(l.ns, 0) AS BIGINT) AS dataloader_ns
FROM s
JOIN traces t USING (trace_id)
LEFT JOIN busy b_all ON b_all.trace_id = s.trace_id AND b_all.pid = s.pid
                    AND b_all.annotation_id = s.annotation_id AND b_all.class_set = 'all'
LEFT JOIN busy b_comp ON b_comp.trace_id = s.trace_id AND b_comp.pid = s.pid
                     AND b_comp.annotation_id = s.annotation_id AND b_comp.class_set = 'compute'
LEFT JOIN busy b_comm ON b_comm.trace_id = s.trace_id AND b_comm.pid = s.pid
                     AND b_comm.annotation_id = s.annotation_id AND b_comm.class_set = 'communication'
LEFT JOIN busy b_mem ON b_mem.trace_id = s.trace_id AND b_mem.pid = s.pid
                    AND b_mem.annotation_id = s.annotation_id AND b_mem.class_set = 'memory'
LEFT JOIN loader l ON l.trace_id = s.trace_id AND l.pid = s.pid AND l.annotation_id = s.annotation_id;

-- steps: (see steps_matching)
CREATE OR REPLACE VIEW steps AS
SELECT * FROM steps_matching('^(ProfilerStep#[0-9]+|step[ _#-]?[0-9]+)$');
