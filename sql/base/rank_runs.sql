-- rank_runs: which traces and processes are ranks of one distributed run. Nsight:
-- the processes of one export (rank = order of pid). PyTorch: files in one directory
-- with the same world size whose time spans overlap (rank from distributedInfo).
--
-- depends: gpu_op_class, traces, intervals_union
--
-- @column trace_id  Trace.
-- @column pid       Process.
-- @column run_id    Identifier of the run.
-- @column rank      Rank within the run.
CREATE OR REPLACE VIEW rank_runs AS
WITH procs AS (
    SELECT DISTINCT trace_id, pid FROM gpu_op_class WHERE op_class = 'communication'
),
torch AS (
    SELECT t.trace_id, regexp_replace(t.path, '[^/]*$', '') || '|' || t.world_size AS group_key,
           t.rank, t.start_ns + t.clock_offset_ns AS start_epoch, t.end_ns + t.clock_offset_ns AS end_epoch
    FROM traces t
    WHERE t.source = 'pytorch' AND t.rank IS NOT NULL AND t.clock_offset_ns IS NOT NULL
),
torch_spans AS (
    SELECT group_key AS lane, start_epoch AS start_ns, end_epoch AS end_ns FROM torch
),
spans AS (
    -- the stretches of time covered by a group's traces; each is one run
    SELECT lane AS group_key, start_ns, end_ns,
           row_number() OVER (PARTITION BY lane ORDER BY start_ns) - 1 AS cluster
    FROM intervals_union(torch_spans)
),
clustered AS (
    SELECT t.trace_id, t.group_key, t.rank, s.cluster
    FROM torch t
    JOIN spans s ON s.group_key = t.group_key AND t.start_epoch BETWEEN s.start_ns AND s.end_ns
)
SELECT p.trace_id, p.pid, c.group_key || '|' || c.cluster AS run_id, c.rank
FROM procs p JOIN clustered c USING (trace_id)
UNION ALL
SELECT p.trace_id, p.pid, p.trace_id AS run_id,
       CAST(dense_rank() OVER (PARTITION BY p.trace_id ORDER BY p.pid) - 1 AS INTEGER) AS rank
FROM procs p JOIN traces t USING (trace_id)
WHERE t.source = 'nsys';
