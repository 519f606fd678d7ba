-- nvtx_gpu_summary: the GPU time of the work launched inside each named range,
-- per range name (NVIDIA's nvtx_gpu_proj_sum). A GPU operation belongs to every
-- range, on the thread that launched it, that contains its launching API call. A
-- range's projection runs from the first start to the last end of its GPU
-- operations. Ranges that launched no GPU work are left out. Ranges on a thread are
-- taken to nest (push/pop ranges always do); a start/end range that overlaps another
-- without nesting may miss work launched outside its nesting parent.
--
-- depends: nvtx_ranges, gpu_ops, api
-- materialize: per trace
--
-- @column trace_id          Trace.
-- @column range             Range name (as in nvtx_summary).
-- @column style             'PushPop', 'StartEnd' or 'UserAnnotation'.
-- @column total_proj_ns     Sum over ranges of their projected GPU span (ns).
-- @column total_range_ns    Sum over the same ranges of their CPU duration (ns).
-- @column instances         Ranges with at least one GPU operation.
-- @column proj_avg_ns       Mean projected span (ns).
-- @column proj_med_ns       Median projected span (ns).
-- @column proj_min_ns       Shortest projected span (ns).
-- @column proj_max_ns       Longest projected span (ns).
-- @column proj_stddev_ns    Sample standard deviation of the projected span (ns).
-- @column total_gpu_ops     GPU operations launched inside these ranges.
-- @column avg_gpu_ops       total_gpu_ops / instances.
-- @column avg_range_level   Mean nesting depth of the ranges (0 = outermost).
-- @column avg_num_children  Mean number of direct child ranges that launched GPU work.

-- nvtx_gpu_projection: one row per range that launched GPU work, with its projection.
--
-- @column annotation_id  The range (annotations.annotation_id).
-- @column range_ns       The range's CPU duration (ns).
-- @column proj_start_ns  First start of its GPU operations (ns).
-- @column proj_end_ns    Last end of its GPU operations (ns).
-- @column proj_ns        proj_end_ns - proj_start_ns.
-- @column gpu_ops        GPU operations launched inside the range.
-- @column parent_id      annotation_id of the enclosing range (nvtx_ranges.parent_id).
-- @column depth          Nesting depth on its thread (0 = outermost).
CREATE OR REPLACE VIEW nvtx_gpu_projection AS
WITH RECURSIVE launched AS (
    SELECT o.trace_id, o.start_ns, o.end_ns, c.pid, c.tid,
           c.start_ns AS call_start_ns, c.end_ns AS call_end_ns
    FROM gpu_ops o
    JOIN api c ON c.trace_id = o.trace_id AND c.pid = o.pid
              AND c.correlation_id = o.correlation_id
),
-- The last range on the launching thread that started no later than the call. The
-- ranges that contain the call are that range or its ancestors (ranges on a thread
-- nest), so walking up the parent chain finds all of them without comparing every
-- launch with every range. Of ranges that start at the same time the innermost (deepest;
-- then the longest, then the lowest annotation_id) is the one: its ancestors include the
-- others, and the ASOF join would pick any of them, missing the inner ones' launches.
starts AS (
    SELECT trace_id, pid, tid, start_ns, annotation_id
    FROM nvtx_ranges
    QUALIFY row_number() OVER (PARTITION BY trace_id, pid, tid, start_ns
                               ORDER BY depth DESC, end_ns DESC, annotation_id) = 1
),
candidate AS (
    SELECT l.*, r.annotation_id
    FROM launched l
    ASOF JOIN starts r
      ON l.trace_id = r.trace_id AND l.pid = r.pid AND l.tid = r.tid
     AND l.call_start_ns >= r.start_ns
),
chain AS (
    SELECT c.trace_id, c.start_ns, c.end_ns, c.call_start_ns, c.call_end_ns,
           r.annotation_id, r.parent_id,
           r.start_ns <= c.call_start_ns AND c.call_end_ns <= r.end_ns AS contains_call
    FROM candidate c
    JOIN nvtx_ranges r ON r.trace_id = c.trace_id AND r.annotation_id = c.annotation_id
    UNION ALL
    SELECT c.trace_id, c.start_ns, c.end_ns, c.call_start_ns, c.call_end_ns,
           r.annotation_id, r.parent_id,
           r.start_ns <= c.call_start_ns AND c.call_end_ns <= r.end_ns
    FROM chain c
    JOIN nvtx_ranges r ON r.trace_id = c.trace_id AND r.annotation_id = c.parent_id
)
SELECT r.trace_id, r.annotation_id, r.parent_id, r.depth, r.range, r.style,
       r.duration_ns AS range_ns,
       min(c.start_ns) AS proj_start_ns,
       max(c.end_ns) AS proj_end_ns,
       max(c.end_ns) - min(c.start_ns) AS proj_ns,
       count(*) AS gpu_ops
FROM chain c
JOIN nvtx_ranges r ON r.trace_id = c.trace_id AND r.annotation_id = c.annotation_id
WHERE c.contains_call
GROUP BY ALL;

-- nvtx_gpu_summary: (columns above)
CREATE OR REPLACE VIEW nvtx_gpu_summary AS
WITH children AS (
    SELECT trace_id, parent_id, count(*) AS n
    FROM nvtx_gpu_projection
    GROUP BY ALL
)
SELECT p.trace_id, p.range, p.style,
       CAST(sum(p.proj_ns) AS BIGINT) AS total_proj_ns,
       CAST(sum(p.range_ns) AS BIGINT) AS total_range_ns,
       count(*) AS instances,
       avg(p.proj_ns) AS proj_avg_ns,
       median(p.proj_ns) AS proj_med_ns,
       min(p.proj_ns) AS proj_min_ns,
       max(p.proj_ns) AS proj_max_ns,
       coalesce(stddev_samp(p.proj_ns), 0) AS proj_stddev_ns,
       CAST(sum(p.gpu_ops) AS BIGINT) AS total_gpu_ops,
       sum(p.gpu_ops) / count(*) AS avg_gpu_ops,
       avg(p.depth) AS avg_range_level,
       avg(coalesce(c.n, 0)) AS avg_num_children
FROM nvtx_gpu_projection p
LEFT JOIN children c ON c.trace_id = p.trace_id AND c.parent_id = p.annotation_id
GROUP BY p.trace_id, p.range, p.style;
