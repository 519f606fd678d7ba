-- steady_idle: the GPU idle time of the steady steps, per process, by what the thread that
-- launched the GPU's next operation did while the GPU waited: what `tracelake diff` compares
-- for host-side and synchronization causes. Each gap over 10 us (largest_gpu_gaps:
-- gpu_gap_causes_over(10000), evaluated once per trace), clipped to the steady steps, is cut
-- where the spans of that thread begin and end, and each piece goes to the first of:
--   'data_loading'   the thread was in a data-loading range (a range or operator whose name
--                    says data_load / data loading / DataLoader); name: the range;
--   'sync'           the thread was in a synchronizing call (cudaStreamSynchronize,
--                    cudaDeviceSynchronize, cudaEventSynchronize, a synchronous cudaMemcpy);
--                    name: the call;
--   'host_sleep'     the thread was in an OS-runtime sleep (Nsight -t osrt: nanosleep,
--                    clock_nanosleep, usleep, ...); name: the call;
--   'sync'           the gap began in this step while the thread sat in a synchronizing call
--                    (host_activity), or is a host_wait gap after such a gap with only host_wait
--                    gaps between: the GPU drained, and the launches after the call returned came
--                    late until the host got ahead again (the rest of these gaps is the sync's cost);
--   'host_blocking'  the thread was in another OS-runtime call and no CUDA API call (poll,
--                    read, pthread_cond_wait, ...); name: the call;
--   'host_idle'      the thread ran no operator, range or CUDA call (only where the trace
--                    records operators: PyTorch); name: where in the step ('before the GPU
--                    work' when the gap opens the step, 'after the GPU work' when it closes
--                    it, else 'between GPU work');
--   'idle'           the rest: launches and operators on the host; name: the gap's cause
--                    ('host_wait', 'kernel_wait', 'other', 'in_graph').
-- Of several spans of one kind over a piece, the name is the first in text order. A step's
-- own range (steady_steps.step) is no span. The rest of the steps' idle time
-- (steady_steps.gpu_idle_ns) is one row with kind 'idle', name 'short_gaps'.
--
-- depends: largest_gpu_gaps, steady_steps, gpu_ops, api, cpu_ops, annotations, os_runtime_calls
-- materialize: per trace
--
-- @column trace_id       Trace.
-- @column pid            Process.
-- @column kind           'data_loading', 'sync', 'host_sleep', 'host_blocking', 'host_idle' or 'idle'.
-- @column name           The range or call (data_loading, sync, host_sleep, host_blocking), where in
--                        the step (host_idle), else the gap's cause or 'short_gaps'.
-- @column cause          idle_cause of the gaps ('short_gaps' for the rest).
-- @column gaps           Gaps over 10 us with a piece of this kind and name (0 for short_gaps).
-- @column idle_ns        Idle time inside the steady steps (ns).
CREATE OR REPLACE VIEW steady_idle AS
WITH clipped AS (
    SELECT g.trace_id, g.pid, g.device_id, g.start_ns AS gap_ns, g.end_ns AS gap_end_ns, g.cause, g.host_activity,
           s.step, greatest(g.start_ns, s.start_ns) AS a, least(g.end_ns, s.end_ns) AS b,
           g.start_ns >= s.start_ns AS began_in_step,
           CASE WHEN g.start_ns <= s.start_ns THEN 'before the GPU work'
                WHEN g.end_ns >= s.end_ns THEN 'after the GPU work' ELSE 'between GPU work' END AS position
    FROM largest_gpu_gaps g
    JOIN steady_steps s ON s.trace_id = g.trace_id AND s.pid = g.pid
                       AND g.start_ns < s.end_ns AND g.end_ns > s.start_ns
),
chained AS (
    -- runs of gaps in a step: a run starts at each gap that is no host_wait or that began in a
    -- synchronizing call in this step, and holds the host_wait gaps after it (launches that came late)
    SELECT *, sum(CASE WHEN began_in_sync OR cause <> 'host_wait' THEN 1 ELSE 0 END)
                  OVER (PARTITION BY trace_id, pid, step ORDER BY gap_ns, device_id ROWS UNBOUNDED PRECEDING) AS run
    FROM (SELECT *, began_in_step AND host_activity IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize',
                        'cudaEventSynchronize', 'cudaMemcpy', 'aten::item', 'aten::_local_scalar_dense') AS began_in_sync
          FROM clipped)
),
synced AS (
    -- the sync that opened the gap's run, if one did: the gap's GPU idle is that sync's cost
    SELECT *, CASE WHEN first_value(began_in_sync) OVER w THEN first_value(host_activity) OVER w END AS sync_name
    FROM chained
    WINDOW w AS (PARTITION BY trace_id, pid, step, run ORDER BY gap_ns, device_id)
),
launcher AS (
    -- the thread that launched the operation that ended the gap (of several that started then,
    -- the one gpu_gap_causes takes: the first launched, then the lowest stream, the first name)
    SELECT c.trace_id, c.pid, c.device_id, c.gap_ns,
           arg_min(coalesce(a.tid, o.tid), (coalesce(o.correlation_id, 9223372036854775807),
                                           coalesce(o.stream_id, 9223372036854775807), coalesce(o.name, ''))) AS tid
    FROM (SELECT DISTINCT trace_id, pid, device_id, gap_ns, gap_end_ns FROM synced) c
    JOIN gpu_ops o ON o.trace_id = c.trace_id AND o.pid = c.pid AND o.device_id = c.device_id
                  AND o.start_ns = c.gap_end_ns
    LEFT JOIN api a ON a.trace_id = o.trace_id AND a.pid = o.pid AND a.correlation_id = o.correlation_id
    GROUP BY ALL
),
gaps AS (
    SELECT c.*, l.tid, exists(SELECT 1 FROM cpu_ops o WHERE o.trace_id = c.trace_id AND o.pid = c.pid) AS has_ops
    FROM synced c LEFT JOIN launcher l USING (trace_id, pid, device_id, gap_ns)
),
spans AS (
    -- the thread's spans, by precedence (1 first); 3: other CUDA calls, 6: other operators and ranges
    SELECT trace_id, pid, tid, start_ns, end_ns, name,
           CASE WHEN regexp_matches(name, '(?i)data.?load|dataloader') THEN 1 ELSE 6 END AS precedence
    FROM annotations WHERE NOT is_gpu
    UNION ALL
    SELECT trace_id, pid, tid, start_ns, end_ns, name,
           CASE WHEN regexp_matches(name, '(?i)data.?load|dataloader') THEN 1 ELSE 6 END
    FROM cpu_ops
    UNION ALL
    SELECT trace_id, pid, tid, start_ns, end_ns, name,
           CASE WHEN name IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaMemcpy')
                THEN 2 ELSE 3 END
    FROM api
    UNION ALL
    SELECT trace_id, pid, tid, start_ns, end_ns, name, CASE WHEN name ILIKE '%sleep%' THEN 4 ELSE 5 END
    FROM os_runtime_calls WHERE nesting_level IS NOT NULL
),
thread_window AS (
    -- per thread that launched the operation after a gap: the gaps' extent, and a bucket width
    -- that cuts it into at most ~20,000 buckets (at least 1 ms)
    SELECT trace_id, pid, tid, min(a) AS lo, max(b) AS hi, greatest(1000000, (max(b) - min(a)) // 20000 + 1) AS w
    FROM gaps WHERE tid IS NOT NULL GROUP BY ALL
),
gap_buckets AS (
    SELECT g.trace_id, g.pid, g.tid, g.gap_ns, g.a, g.b, unnest(range(g.a // w.w, g.b // w.w + 1)) AS bucket
    FROM gaps g JOIN thread_window w USING (trace_id, pid, tid)
),
span_buckets AS (
    -- the thread's spans over its gaps' extent, in each bucket they touch (a span and a gap that
    -- overlap share a bucket: the join below matches within buckets, not thread-wide)
    SELECT s.trace_id, s.pid, s.tid, s.start_ns, s.end_ns, s.name, s.precedence,
           unnest(range(greatest(s.start_ns, w.lo) // w.w, least(s.end_ns, w.hi) // w.w + 1)) AS bucket
    FROM spans s JOIN thread_window w USING (trace_id, pid, tid)
    WHERE s.start_ns < w.hi AND s.end_ns > w.lo
),
touching AS (
    SELECT DISTINCT g.trace_id, g.pid, g.gap_ns, g.a, s.start_ns, s.end_ns, s.name, s.precedence
    FROM gap_buckets g
    JOIN span_buckets s ON s.trace_id = g.trace_id AND s.pid = g.pid AND s.tid = g.tid AND s.bucket = g.bucket
                       AND s.start_ns < g.b AND s.end_ns > g.a
    ANTI JOIN steady_steps st ON st.trace_id = g.trace_id AND st.step = s.name
),
cuts AS (
    -- the gap's pieces: between consecutive span edges inside it
    SELECT trace_id, pid, gap_ns, a, t AS piece_start,
           lead(t) OVER (PARTITION BY trace_id, pid, gap_ns, a ORDER BY t) AS piece_end
    FROM (SELECT trace_id, pid, gap_ns, a, a AS t FROM gaps
          UNION SELECT trace_id, pid, gap_ns, a, b FROM gaps
          UNION SELECT trace_id, pid, gap_ns, a, start_ns FROM touching WHERE start_ns > a
          UNION SELECT t.trace_id, t.pid, t.gap_ns, t.a, t.end_ns FROM touching t
                JOIN gaps g USING (trace_id, pid, gap_ns, a) WHERE t.end_ns < g.b)
),
pieces AS (
    -- each piece with the first span over it (NULL: the thread ran nothing recorded)
    SELECT c.trace_id, c.pid, c.gap_ns, c.a, c.piece_end - c.piece_start AS ns,
           arg_min(t.name, (t.precedence, t.name)) AS span_name, min(t.precedence) AS precedence
    FROM cuts c
    LEFT JOIN touching t ON t.trace_id = c.trace_id AND t.pid = c.pid AND t.gap_ns = c.gap_ns AND t.a = c.a
                        AND t.start_ns <= c.piece_start AND t.end_ns >= c.piece_end
    WHERE c.piece_end > c.piece_start
    GROUP BY c.trace_id, c.pid, c.gap_ns, c.a, c.piece_start, c.piece_end
),
named AS (
    SELECT g.trace_id, g.pid, g.gap_ns, g.cause, p.ns,
           CASE WHEN p.precedence = 1 THEN 'data_loading'
                WHEN p.precedence = 2 THEN 'sync'
                WHEN p.precedence = 4 THEN 'host_sleep'
                WHEN g.sync_name IS NOT NULL THEN 'sync'
                WHEN p.precedence = 5 THEN 'host_blocking'
                WHEN p.precedence IS NULL AND g.has_ops AND g.tid IS NOT NULL THEN 'host_idle'
                WHEN g.host_activity LIKE '%DataLoader%' THEN 'data_loading'
                ELSE 'idle' END AS kind,
           CASE WHEN kind = 'sync' AND p.precedence = 2 OR kind <> 'sync' AND p.precedence IN (1, 4, 5) THEN p.span_name
                WHEN kind = 'sync' THEN g.sync_name
                WHEN kind = 'host_idle' THEN g.position
                WHEN kind = 'data_loading' THEN g.host_activity
                ELSE g.cause END AS name
    FROM gaps g JOIN pieces p USING (trace_id, pid, gap_ns, a)
),
total AS (SELECT trace_id, pid, sum(gpu_idle_ns) AS idle_ns FROM steady_steps GROUP BY ALL),
grouped AS (
    SELECT trace_id, pid, kind, name, cause, count(DISTINCT gap_ns) AS gaps, sum(ns) AS idle_ns
    FROM named GROUP BY ALL
)
SELECT * FROM grouped
UNION ALL
SELECT t.trace_id, t.pid, 'idle', 'short_gaps', 'short_gaps', 0,
       t.idle_ns - coalesce((SELECT sum(n.idle_ns) FROM grouped n WHERE n.trace_id = t.trace_id AND n.pid = t.pid), 0)
FROM total t;
