-- timeline_spans(tbl, px_ns): what a timeline of one time window draws, at most a few marks
-- per pixel whatever the number of operations: the rows of tbl (lane, category, start_ns,
-- end_ns, name, label) merge, per lane and category, into spans at the drawing's resolution
-- (px_ns, one pixel): a span runs while its next row starts less than px_ns after the span's
-- furthest end, so that marks a reader could not tell apart become one, short or long. A
-- row with a label (the longest operations, the largest gaps) stays a mark of its own, drawn
-- over its lane; it does not extend a span. A span's name is that of its longest row (the
-- first of equals).
-- timeline_rows(trace, pid, t0_ns, t1_ns, px_ns, merge_ns, labels): the timeline of one
-- process between t0_ns and t1_ns (a step), at px_ns per pixel, as timeline_spans merges it
-- at merge_ns (the page passes two pixels: a white line of a pixel is hard to see): lanes
-- 'thread <tid>' (its top-level operators: category 'cpu_op') and 'thread <tid> CUDA API'
-- (its runtime/driver calls: 'cuda_api', synchronizations 'sync') for the threads that
-- launched GPU work in the window; 'GPU <device> stream <stream>' (gpu_op_class: 'compute',
-- 'communication', 'memcpy', 'memset'); 'GPU <device> idle' (the GPU's gaps over 10 us,
-- largest_gpu_gaps: category = the cause; a mark shorter than px_ns is left out); and the
-- step's critical path (cp_edges of the step's graph with time on the path, on the lane of
-- their event, category 'path': the critical_path view's rows, read from its tables for the
-- step alone, 5x faster than filtering the view; where the graph is the whole trace's '(trace)'
-- step, its path edges inside the window). Operations are clipped to the window. The
-- `labels` longest GPU operations are labelled K1.., the `labels` largest gaps G1..
-- timeline_gpu_rows(trace, pid, t0_ns, t1_ns, px_ns, merge_ns, labels): timeline_rows' GPU
-- stream and idle lanes alone, without the critical path (another rank's GPUs beside a page's
-- step: half the time of timeline_rows, which reads the CPU operations and the path too).
-- timeline_gpu_marks and timeline_drawn are their shared parts: the window's GPU operations and
-- gaps, labelled, and the merged rows with their layer.
--
-- depends: gpu_op_class, api, cpu_ops, largest_gpu_gaps, cp_steps, cp_edges, cp_nodes
--
-- @column lane        'thread N', 'thread N CUDA API', 'GPU d stream s', 'GPU d idle'.
-- @column layer       'operation' (one operation), 'span' (several merged), 'gap' (GPU idle: one
--                     gap or several merged), 'path' (critical path, drawn over the lanes).
-- @column category    Operation class, gap cause or 'path'.
-- @column start_ns    Start, clipped to the window (ns).
-- @column end_ns      End, clipped to the window (ns).
-- @column ops         Operations, gaps or path edges drawn by the mark.
-- @column busy_ns     Their summed durations, clipped (ns): busy_ns / (end_ns - start_ns) is
--                     how full the mark is (its shade).
-- @column name        The operation's name; for a span, the name of its longest operation; for a
--                     gap, the operation that ended it.
-- @column label       'K1'.. on the longest GPU operations, 'G1'.. on the largest gaps; NULL.
CREATE OR REPLACE MACRO timeline_spans(tbl, px_ns) AS TABLE
WITH marks AS (
    SELECT lane, category, start_ns, end_ns, name, label, {'ns': end_ns - start_ns, 'first': -start_ns, 'name': name} AS size
    FROM query_table(tbl)
    WHERE start_ns IS NOT NULL AND end_ns >= start_ns
),
-- rows that start within px_ns of each other always share a span: merged first by a GROUP BY on
-- start_ns // px_ns (floored), which leaves the window functions below a few rows per pixel
-- (DuckDB's windows cost ~2 us a row: 80 ms for the 40,000 rows of a large step)
buckets AS (
    SELECT lane, category, min(start_ns) AS start_ns, max(end_ns) AS end_ns, count(*) AS ops,
           sum(end_ns - start_ns) AS busy_ns, max(size) AS longest
    FROM marks WHERE label IS NULL
    GROUP BY lane, category, start_ns // px_ns - CASE WHEN start_ns < 0 AND start_ns % px_ns <> 0 THEN 1 ELSE 0 END
),
reach AS (
    SELECT *, max(end_ns) OVER (PARTITION BY lane, category ORDER BY start_ns
                                ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach_ns
    FROM buckets
),
grouped AS (
    SELECT *, sum(CASE WHEN reach_ns IS NULL OR start_ns >= reach_ns + px_ns THEN 1 ELSE 0 END)
                  OVER (PARTITION BY lane, category ORDER BY start_ns) AS span
    FROM reach
)
SELECT lane, category, start_ns, end_ns, 1 AS ops, end_ns - start_ns AS busy_ns, name, label
FROM marks WHERE label IS NOT NULL
UNION ALL
SELECT lane, category, min(start_ns), max(end_ns), CAST(sum(ops) AS BIGINT), CAST(sum(busy_ns) AS BIGINT),
       max(longest).name, NULL
FROM grouped
GROUP BY lane, category, span;

CREATE OR REPLACE MACRO timeline_gpu_marks(trace, process, t0_ns, t1_ns, labels) AS TABLE
WITH gpu AS (
    SELECT 'GPU ' || device_id || ' stream ' || coalesce(CAST(stream_id AS VARCHAR), '?') AS lane,
           op_class AS category, greatest(start_ns, t0_ns) AS start_ns, least(end_ns, t1_ns) AS end_ns, name
    FROM gpu_op_class
    WHERE trace_id = trace AND pid = process AND start_ns < t1_ns AND end_ns > t0_ns
),
gaps AS (
    SELECT 'GPU ' || device_id || ' idle' AS lane, cause AS category, greatest(start_ns, t0_ns) AS start_ns,
           least(end_ns, t1_ns) AS end_ns, next_op AS name
    FROM largest_gpu_gaps
    WHERE trace_id = trace AND pid = process AND start_ns < t1_ns AND end_ns > t0_ns
)
SELECT lane, category, start_ns, end_ns, name,
       CASE WHEN row_number() OVER (ORDER BY end_ns - start_ns DESC, start_ns, lane) <= labels
            THEN 'K' || row_number() OVER (ORDER BY end_ns - start_ns DESC, start_ns, lane) END AS label
FROM gpu
UNION ALL
SELECT *, CASE WHEN row_number() OVER (ORDER BY end_ns - start_ns DESC, start_ns, lane) <= labels
               THEN 'G' || row_number() OVER (ORDER BY end_ns - start_ns DESC, start_ns, lane) END AS label
FROM gaps;

CREATE OR REPLACE MACRO timeline_drawn(tbl, px_ns, merge_ns) AS TABLE
SELECT lane, CASE WHEN category = 'path' THEN 'path' WHEN lane LIKE '% idle' THEN 'gap'
                  WHEN ops = 1 THEN 'operation' ELSE 'span' END AS layer,
       category, start_ns, end_ns, ops, busy_ns, name, label
FROM timeline_spans(tbl, merge_ns)
WHERE end_ns - start_ns >= px_ns OR NOT lane LIKE '% idle';

CREATE OR REPLACE MACRO timeline_gpu_rows(trace, process, t0_ns, t1_ns, px_ns, merge_ns, labels) AS TABLE
WITH marks AS (SELECT * FROM timeline_gpu_marks(trace, process, t0_ns, t1_ns, labels))
SELECT * FROM timeline_drawn(marks, px_ns, merge_ns);

CREATE OR REPLACE MACRO timeline_rows(trace, process, t0_ns, t1_ns, px_ns, merge_ns, labels) AS TABLE
WITH gpu AS (
    SELECT correlation_id FROM gpu_op_class
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
cpu AS (
    SELECT 'thread ' || tid || ' CUDA API' AS lane,
           CASE WHEN name ILIKE '%synchronize%' OR name ILIKE '%EventQuery%' OR name ILIKE '%StreamWait%'
                THEN 'sync' ELSE 'cuda_api' END AS category,
           start_ns, end_ns, name, NULL AS label
    FROM calls WHERE tid IN (SELECT tid FROM launchers)
    UNION ALL
    SELECT 'thread ' || tid, 'cpu_op', greatest(start_ns, t0_ns), least(end_ns, t1_ns), name, NULL
    FROM cpu_ops
    WHERE trace_id = trace AND pid = process AND parent_op_id IS NULL AND start_ns < t1_ns AND end_ns > t0_ns
      AND tid IN (SELECT tid FROM launchers)
),
step_graph AS (  -- the process's graph steps in the window, or the trace's one '(trace)' step
    SELECT step_id FROM cp_steps
    WHERE trace_id = trace AND (pid = process OR pid IS NULL) AND start_ns < t1_ns AND end_ns > t0_ns
),
-- the nodes of the step first: three joins on them cost a third of three on all of the trace
nodes AS (
    SELECT node_id, ts_ns, kind, name, tid, device_id, stream_id FROM cp_nodes
    WHERE trace_id = trace AND step_id IN (SELECT step_id FROM step_graph)
),
path AS (
    SELECT CASE WHEN n.kind IN ('kernel', 'memcpy', 'memset')
                     THEN 'GPU ' || n.device_id || ' stream ' || coalesce(CAST(n.stream_id AS VARCHAR), '?')
                WHEN n.kind = 'call' THEN 'thread ' || n.tid || ' CUDA API'
                ELSE 'thread ' || n.tid END AS lane,
           'path' AS category, a.ts_ns AS start_ns, b.ts_ns AS end_ns, n.name, NULL AS label
    FROM cp_edges e
    JOIN nodes a ON a.node_id = e.src_node
    JOIN nodes b ON b.node_id = e.dst_node
    JOIN nodes n ON n.node_id = 2 * e.event_id
    WHERE e.trace_id = trace AND e.step_id IN (SELECT step_id FROM step_graph)
      AND e.path_order IS NOT NULL AND e.weight_ns > 0 AND a.ts_ns >= t0_ns AND b.ts_ns <= t1_ns
),
marks AS (
    SELECT * FROM timeline_gpu_marks(trace, process, t0_ns, t1_ns, labels) UNION ALL SELECT * FROM cpu
    UNION ALL SELECT * FROM path
)
SELECT * FROM timeline_drawn(marks, px_ns, merge_ns);
