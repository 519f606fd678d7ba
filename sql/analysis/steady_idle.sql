-- steady_idle: the GPU idle time of the steady steps, per process, by why the GPU waited:
-- what `tracelake diff` compares for idle and synchronization causes. The gaps over 10 us
-- (largest_gpu_gaps: gpu_gap_causes_over(10000), evaluated once per trace), clipped to the steady steps, carry their cause and
-- host_activity (the API call or operator the launching thread was in when the gap
-- began); the rest of the steps' idle time (steady_steps.gpu_idle_ns) is one row with
-- cause 'short_gaps'. kind says how a diff reports it:
--   'sync'  the thread was in a synchronizing call (cudaStreamSynchronize,
--           cudaDeviceSynchronize, cudaEventSynchronize, a synchronous cudaMemcpy,
--           aten::item, aten::_local_scalar_dense): the GPU drained while the host waited;
--   'idle'  else; name says why: 'data loading' (a DataLoader iteration), else the cause.
--
-- depends: largest_gpu_gaps, steady_steps
-- materialize: per trace
--
-- @column trace_id       Trace.
-- @column pid            Process.
-- @column kind           'sync' or 'idle'.
-- @column name           The synchronizing call (sync), else 'data loading' or the cause
--                        ('host_wait', 'kernel_wait', 'other', 'in_graph', 'short_gaps').
-- @column cause          idle_cause of the gaps ('short_gaps' for the rest).
-- @column gaps           Gaps over 10 us (0 for short_gaps).
-- @column idle_ns        Idle time inside the steady steps (ns).
CREATE OR REPLACE VIEW steady_idle AS
WITH clipped AS (
    SELECT g.trace_id, g.pid, g.cause, g.host_activity, count(DISTINCT g.start_ns) AS gaps,
           sum(least(g.end_ns, s.end_ns) - greatest(g.start_ns, s.start_ns)) AS idle_ns
    FROM largest_gpu_gaps g
    JOIN steady_steps s ON s.trace_id = g.trace_id AND s.pid = g.pid
                       AND g.start_ns < s.end_ns AND g.end_ns > s.start_ns
    GROUP BY ALL
),
named AS (
    SELECT trace_id, pid,
           CASE WHEN host_activity IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize',
                                       'cudaMemcpy', 'aten::item', 'aten::_local_scalar_dense')
                THEN 'sync' ELSE 'idle' END AS kind,
           CASE WHEN kind = 'sync' THEN host_activity
                WHEN host_activity LIKE '%DataLoader%' THEN 'data loading'
                ELSE cause END AS name,
           cause, gaps, idle_ns
    FROM clipped
),
total AS (SELECT trace_id, pid, sum(gpu_idle_ns) AS idle_ns FROM steady_steps GROUP BY ALL)
SELECT trace_id, pid, kind, name, cause, sum(gaps) AS gaps, sum(idle_ns) AS idle_ns FROM named GROUP BY ALL
UNION ALL
SELECT t.trace_id, t.pid, 'idle', 'short_gaps', 'short_gaps', 0,
       t.idle_ns - coalesce((SELECT sum(n.idle_ns) FROM named n WHERE n.trace_id = t.trace_id AND n.pid = t.pid), 0)
FROM total t;
