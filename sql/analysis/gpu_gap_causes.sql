-- gpu_gap_causes_over(min_ns): every GPU idle gap longer than min_ns (gpu_gaps_over),
-- with what ended it and why the GPU waited. The operation that ended the gap is the
-- first one to start on that GPU at the gap's end (of several that start in the same ns,
-- the first launched: the lowest correlation id); its launching API call (same
-- process and correlation id) tells whether the host was late: the cause, in
-- idle_cause's vocabulary, is 'host_wait' (launched only after the GPU had gone
-- idle), 'kernel_wait' (launched in time, gap under 30 us) or 'other' (launched in
-- time, or no launch call recorded: the GPU waited on something else), or 'in_graph'
-- (the operations before and after the gap belong to one CUDA graph replay).
-- host_activity says what the launching thread was doing when the gap began: the API
-- call in progress (e.g. cudaStreamSynchronize), else the innermost operator or range
-- that still ran at its start (found from the last one that started before it, walking
-- out through the ranges enclosing it). Where several start in the same ns (clocks in
-- microseconds), the API call is the longest of them and the operator the innermost.
-- gpu_gap_causes (sql/analysis/largest_gpu_gaps.sql): the same for gaps longer than 100 us.
--
-- depends: gpu_gaps, gpu_ops, api, cpu_ops, annotations, idle_cause, graph_launches
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column device_id        GPU.
-- @column start_ns         Gap start: end of the busy time before it (ns).
-- @column end_ns           Gap end: start of next_op (ns).
-- @column duration_ns      end_ns - start_ns.
-- @column next_op          Name of the operation that ended the gap.
-- @column next_category    'kernel', 'memcpy' or 'memset'.
-- @column launch_api       Name of the API call that launched next_op (NULL if unknown).
-- @column launch_delay_ns  Launch call start - gap start (ns): > 0 when issued after the GPU went idle.
-- @column cause            'host_wait', 'kernel_wait', 'other' or 'in_graph' (idle_cause).
-- @column host_activity    What the launching thread was doing at the gap start (NULL if nothing recorded).
CREATE OR REPLACE MACRO gpu_gap_causes_over(min_ns) AS TABLE
WITH RECURSIVE gaps AS (
    SELECT trace_id, pid, device_id, start_ns, end_ns, duration_ns FROM gpu_gaps_over(min_ns)
),
ended_by AS (
    SELECT g.*, o.name AS next_op, o.category AS next_category, o.correlation_id, o.tid AS op_tid
    FROM gaps g
    -- of operations that start in the same ns (on other streams), the first launched (lowest
    -- correlation id), then the lowest stream and the first name: an ASOF join on the start alone
    -- takes any one of them
    ASOF LEFT JOIN (SELECT *, {'start_ns': start_ns, 'correlation_id': coalesce(correlation_id, 9223372036854775807),
                              'stream_id': coalesce(stream_id, 9223372036854775807), 'name': coalesce(name, '')} AS k
                    FROM gpu_ops) o
      ON o.trace_id = g.trace_id AND o.pid = g.pid AND o.device_id = g.device_id
     AND o.k >= {'start_ns': g.end_ns, 'correlation_id': -9223372036854775807, 'stream_id': -9223372036854775807,
                 'name': ''}
),
inside_graph AS (
    -- gaps whose last operation before (ending at the gap start) shares the graph launch of next_op
    SELECT e.trace_id, e.pid, e.device_id, e.start_ns
    FROM ended_by e
    JOIN graph_launches l ON l.trace_id = e.trace_id AND l.pid = e.pid AND l.correlation_id = e.correlation_id
    JOIN gpu_ops p ON p.trace_id = e.trace_id AND p.pid = e.pid AND p.device_id = e.device_id
                  AND p.correlation_id = e.correlation_id AND p.end_ns = e.start_ns
    GROUP BY ALL
),
launched AS (
    SELECT e.*, a.name AS launch_api, a.start_ns AS launch_start_ns, coalesce(a.tid, e.op_tid) AS tid
    FROM ended_by e
    LEFT JOIN (SELECT trace_id, pid, correlation_id, any_value(name) AS name, min(start_ns) AS start_ns,
                      any_value(tid) AS tid
               FROM api WHERE correlation_id IS NOT NULL GROUP BY ALL) a
      ON a.trace_id = e.trace_id AND a.pid = e.pid AND a.correlation_id = e.correlation_id
),
in_api AS (
    -- the call that started last on the thread at or before the gap start, if it still ran then;
    -- of several that started in the same ns (an ASOF join on the start alone takes any one,
    -- perhaps one that had ended), the longest, then the last issued (correlation id)
    SELECT l.trace_id, l.pid, l.device_id, l.start_ns,
           CASE WHEN a.end_ns >= l.start_ns THEN a.name END AS api_name
    FROM launched l
    ASOF LEFT JOIN (SELECT *, {'start_ns': start_ns, 'end_ns': end_ns, 'correlation_id': coalesce(correlation_id, -1)} AS k
                    FROM api) a
      ON a.trace_id = l.trace_id AND a.pid = l.pid AND a.tid = l.tid
     AND a.k <= {'start_ns': l.start_ns, 'end_ns': 9223372036854775807, 'correlation_id': 9223372036854775807}
),
host_spans AS (
    -- operators and CPU ranges, each with its innermost enclosing one of the same kind and thread
    SELECT trace_id, pid, tid, 'op' AS kind, op_id AS id, parent_op_id AS parent_id, depth, start_ns, end_ns, name
    FROM cpu_ops
    UNION ALL
    SELECT trace_id, pid, tid, 'range', annotation_id, parent_id, depth, start_ns, end_ns, name
    FROM annotations WHERE NOT is_gpu
),
last_started AS (
    -- per kind, the last operator / range that started on the thread at or before the gap start;
    -- of several that started in the same ns (an operator and the one it calls first), the
    -- innermost (the deepest, then the longest, then the lowest id), from which walking out
    -- passes the others (an ASOF join on the start alone takes any one of them)
    SELECT l.trace_id, l.pid, l.device_id, l.start_ns AS gap_ns, l.kind, c.id, c.parent_id,
           c.start_ns, c.end_ns, c.name
    FROM (SELECT l.*, k.kind FROM launched l CROSS JOIN (VALUES ('op'), ('range')) k(kind)) l
    ASOF JOIN (SELECT *, {'start_ns': start_ns, 'depth': coalesce(depth, 0), 'end_ns': end_ns, 'id': -id} AS k FROM host_spans) c
      ON c.trace_id = l.trace_id AND c.pid = l.pid AND c.tid = l.tid AND c.kind = l.kind
     AND c.k <= {'start_ns': l.start_ns, 'depth': 2147483647, 'end_ns': 9223372036854775807, 'id': 9223372036854775807}
),
enclosing AS (
    -- it, or when it had ended by the gap start, its enclosing ones outwards (they nest)
    SELECT * FROM last_started
    UNION ALL
    SELECT e.trace_id, e.pid, e.device_id, e.gap_ns, p.kind, p.id, p.parent_id, p.start_ns, p.end_ns, p.name
    FROM enclosing e
    JOIN host_spans p ON p.trace_id = e.trace_id AND p.pid = e.pid AND p.kind = e.kind AND p.id = e.parent_id
    WHERE e.end_ns < e.gap_ns
),
in_op AS (
    -- the innermost operator or range still running at the gap start: the last to start; of an
    -- operator and a range that started in the same ns, the one that ends first (then by kind
    -- and name: the same answer on every run)
    SELECT trace_id, pid, device_id, gap_ns AS start_ns,
           arg_max(name, {'start_ns': start_ns, 'end_ns': -end_ns, 'kind': kind, 'name': name}) AS op_name
    FROM enclosing WHERE end_ns >= gap_ns
    GROUP BY ALL
)
SELECT l.trace_id, l.pid, l.device_id, l.start_ns, l.end_ns, l.duration_ns, l.next_op, l.next_category,
       l.launch_api, l.launch_start_ns - l.start_ns AS launch_delay_ns,
       idle_cause(l.launch_start_ns, l.start_ns, l.duration_ns, in_graph := ig.start_ns IS NOT NULL) AS cause,
       coalesce(i.api_name, p.op_name) AS host_activity
FROM launched l
LEFT JOIN in_api i USING (trace_id, pid, device_id, start_ns)
LEFT JOIN in_op p USING (trace_id, pid, device_id, start_ns)
LEFT JOIN inside_graph ig USING (trace_id, pid, device_id, start_ns);
