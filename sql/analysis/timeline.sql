-- timeline_spans(tbl, px_ns): what a timeline of one time window draws, legible at any
-- number of operations: the rows of tbl (lane, category, start_ns, end_ns, name) that
-- last px_ns or longer (a pixel of the drawing) stay one mark each; the shorter ones are
-- merged, per lane and category, into spans: a span runs while the next short operation
-- starts less than px_ns after the span's furthest end. A long operation between short
-- ones of its lane does not break their span (it is drawn over it).
-- timeline_rows(trace, pid, t0_ns, t1_ns, px_ns): the timeline of one process between
-- t0_ns and t1_ns (a step), at px_ns per pixel, as timeline_spans merges it: lanes
-- 'thread <tid>' (its top-level operators: category 'cpu_op') and 'thread <tid> CUDA
-- API' (its runtime/driver calls: 'cuda_api', synchronizations 'sync') for the threads
-- that launched GPU work in the window; 'GPU <device> stream <stream>' (gpu_op_class:
-- 'compute', 'communication', 'memcpy', 'memset'); 'GPU <device> idle' (the GPU's
-- gaps over 10 us, largest_gpu_gaps, and px_ns: category = the cause); and the step's
-- critical path (critical_path: edges with time on the path, on the lane of their event,
-- category 'path'). Operations are clipped to the window.
--
-- depends: gpu_op_class, api, cpu_ops, largest_gpu_gaps, critical_path
--
-- @column lane        'thread N', 'thread N CUDA API', 'GPU d stream s', 'GPU d idle'.
-- @column layer       'operation' (one operation), 'span' (operations shorter than px_ns merged),
--                     'gap' (GPU idle), 'path' (critical path, drawn over the lanes).
-- @column category    Operation class, gap cause or 'path'.
-- @column start_ns    Start, clipped to the window (ns).
-- @column end_ns      End, clipped to the window (ns).
-- @column ops         Operations (or path edges) drawn by the mark.
-- @column busy_ns     Their summed durations, clipped (ns).
-- @column name        The operation's name (NULL for a span of several).
CREATE OR REPLACE MACRO timeline_spans(tbl, px_ns) AS TABLE
WITH marked AS (
    SELECT lane, category, start_ns, end_ns, name, end_ns - start_ns < px_ns AS is_short
    FROM query_table(tbl)
    WHERE start_ns IS NOT NULL AND end_ns >= start_ns
),
reach AS (
    SELECT *, max(end_ns) OVER (PARTITION BY lane, category ORDER BY start_ns, end_ns
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach_ns
    FROM marked WHERE is_short
),
grouped AS (
    SELECT *, sum(CASE WHEN reach_ns IS NULL OR start_ns >= reach_ns + px_ns THEN 1 ELSE 0 END)
                  OVER (PARTITION BY lane, category ORDER BY start_ns, end_ns) AS span
    FROM reach
)
SELECT lane, category, start_ns, end_ns, 1 AS ops, end_ns - start_ns AS busy_ns, name
FROM marked WHERE NOT is_short
UNION ALL
SELECT lane, category, min(start_ns), max(end_ns), count(*), sum(end_ns - start_ns),
       CASE WHEN count(*) = 1 THEN any_value(name) END
FROM grouped
GROUP BY lane, category, span;

CREATE OR REPLACE MACRO timeline_rows(trace, process, t0_ns, t1_ns, px_ns) AS TABLE
WITH gpu AS (
    SELECT 'GPU ' || device_id || ' stream ' || coalesce(CAST(stream_id AS VARCHAR), '?') AS lane,
           op_class AS category, greatest(start_ns, t0_ns) AS start_ns, least(end_ns, t1_ns) AS end_ns, name,
           correlation_id
    FROM gpu_op_class
    WHERE trace_id = trace AND pid = process AND start_ns < t1_ns AND end_ns > t0_ns
),
calls AS (
    SELECT tid, name, greatest(start_ns, t0_ns) AS start_ns, least(end_ns, t1_ns) AS end_ns, correlation_id
    FROM api
    WHERE trace_id = trace AND pid = process AND start_ns < t1_ns AND end_ns > t0_ns
),
launchers AS (
    SELECT DISTINCT c.tid FROM calls c SEMI JOIN gpu g ON g.correlation_id = c.correlation_id
),
ops AS (
    SELECT lane, category, start_ns, end_ns, name FROM gpu
    UNION ALL
    SELECT 'thread ' || tid || ' CUDA API',
           CASE WHEN name ILIKE '%synchronize%' OR name ILIKE '%EventQuery%' OR name ILIKE '%StreamWait%'
                THEN 'sync' ELSE 'cuda_api' END,
           start_ns, end_ns, name
    FROM calls WHERE tid IN (SELECT tid FROM launchers)
    UNION ALL
    SELECT 'thread ' || tid, 'cpu_op', greatest(start_ns, t0_ns), least(end_ns, t1_ns), name
    FROM cpu_ops
    WHERE trace_id = trace AND pid = process AND parent_op_id IS NULL AND start_ns < t1_ns AND end_ns > t0_ns
      AND tid IN (SELECT tid FROM launchers)
),
path AS (
    SELECT CASE WHEN event_kind IN ('kernel', 'memcpy', 'memset')
                     THEN 'GPU ' || device_id || ' stream ' || coalesce(CAST(stream_id AS VARCHAR), '?')
                WHEN event_kind = 'call' THEN 'thread ' || tid || ' CUDA API'
                ELSE 'thread ' || tid END AS lane,
           'path' AS category, greatest(start_ns, t0_ns) AS start_ns, least(end_ns, t1_ns) AS end_ns,
           name
    FROM critical_path
    WHERE trace_id = trace AND pid = process AND weight_ns > 0 AND event_kind IS NOT NULL
      AND start_ns >= t0_ns AND end_ns <= t1_ns
)
SELECT lane, CASE WHEN ops = 1 THEN 'operation' ELSE 'span' END AS layer, category, start_ns, end_ns, ops,
       busy_ns, name
FROM timeline_spans(ops, px_ns)
UNION ALL
SELECT lane, 'path', category, start_ns, end_ns, ops, busy_ns, name
FROM timeline_spans(path, px_ns)
UNION ALL
SELECT 'GPU ' || device_id || ' idle', 'gap', cause, greatest(start_ns, t0_ns), least(end_ns, t1_ns), 1,
       least(end_ns, t1_ns) - greatest(start_ns, t0_ns), next_op
FROM largest_gpu_gaps
WHERE trace_id = trace AND pid = process AND start_ns < t1_ns AND end_ns > t0_ns AND duration_ns >= px_ns;
