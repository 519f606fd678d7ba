-- trace_summary: one row per trace with the numbers atop its report page and on the
-- index page: how busy and idle its GPUs were (mean over its processes), its top
-- kernel, how many findings, how much communication compute hid, its median step.
--
-- depends: traces, devices, kernels, temporal_breakdown, kernel_summary, findings,
--          overlap, steps, step_phases
--
-- @column trace_id        Trace.
-- @column file_name       File the trace came from.
-- @column source          'nsys' or 'pytorch'.
-- @column rank            Distributed rank (NULL when the trace does not say).
-- @column duration_ns     Span of the trace (ns).
-- @column is_truncated    True when the file was cut and only complete events were read.
-- @column gpu_names       Names of the GPUs that ran its kernels (sorted; unnamed ones left out).
-- @column idle_pct        temporal_breakdown.idle_pct, mean over the processes (%): idle between each
--                         process's first and last GPU operation.
-- @column trace_idle_pct  GPU idle share of the trace's span (duration_ns), start-up and teardown
--                         included, mean over the processes with GPU work (%).
-- @column compute_pct     temporal_breakdown.compute_pct, mean over the processes (%).
-- @column memcpy_pct      temporal_breakdown.memcpy_pct, mean over the processes (%).
-- @column top_kernel      Kernel name with the most total time (kernel_summary; ties to the first name).
-- @column findings        Number of findings rows.
-- @column finding_rules   Up to three rules with the most flagged time, most first.
-- @column overlap_pct     overlap.communication_overlap_pct, mean over the processes (%).
-- @column median_step_ns  Median wall time of its steady steps (step_phases), all processes (ns).
-- @column steady_idle_pct GPU idle share of the steady steps' wall time, all processes (%; NULL without steps).
CREATE OR REPLACE VIEW trace_summary AS
WITH breakdown AS (
    SELECT b.trace_id, avg(b.idle_pct) AS idle_pct, avg(b.compute_pct) AS compute_pct,
           avg(b.memcpy_pct) AS memcpy_pct,
           avg(100.0 * (t.duration_ns - b.busy_ns) / nullif(t.duration_ns, 0)) AS trace_idle_pct
    FROM temporal_breakdown b JOIN traces t USING (trace_id) GROUP BY b.trace_id
),
gpus AS (
    SELECT k.trace_id, list(DISTINCT d.name ORDER BY d.name) FILTER (WHERE d.name <> '') AS gpu_names
    FROM (SELECT DISTINCT trace_id, device_id FROM kernels) k JOIN devices d USING (trace_id, device_id)
    GROUP BY k.trace_id
),
top AS (SELECT trace_id, arg_min(name, (-total_ns, name)) AS top_kernel FROM kernel_summary GROUP BY trace_id),
-- findings read once (each read evaluates every rule again where they are not derived)
found AS (
    SELECT trace_id, CAST(sum(n) AS BIGINT) AS findings, list(rule ORDER BY ns DESC, rule)[1:3] AS finding_rules
    FROM (SELECT trace_id, rule, count(*) AS n, sum(duration_ns) AS ns FROM findings GROUP BY trace_id, rule)
    GROUP BY trace_id
),
hidden AS (SELECT trace_id, avg(communication_overlap_pct) AS overlap_pct FROM overlap GROUP BY trace_id),
step_times AS (
    SELECT s.trace_id, median(s.wall_ns) AS median_step_ns,
           100.0 * sum(s.gpu_idle_ns) / nullif(sum(s.wall_ns), 0) AS steady_idle_pct
    FROM steps s JOIN (SELECT trace_id, pid, step_index, phase FROM step_phases) p USING (trace_id, pid, step_index)
    WHERE p.phase = 'steady'
    GROUP BY s.trace_id
)
SELECT t.trace_id, t.file_name, t.source, t.rank, t.duration_ns, t.is_truncated,
       coalesce(g.gpu_names, []) AS gpu_names,
       b.idle_pct, b.trace_idle_pct, b.compute_pct, b.memcpy_pct, top.top_kernel, coalesce(f.findings, 0) AS findings,
       coalesce(f.finding_rules, []) AS finding_rules,
       h.overlap_pct, s.median_step_ns, s.steady_idle_pct
FROM traces t
LEFT JOIN breakdown b USING (trace_id)
LEFT JOIN gpus g USING (trace_id)
LEFT JOIN top USING (trace_id)
LEFT JOIN found f USING (trace_id)
LEFT JOIN hidden h USING (trace_id)
LEFT JOIN step_times s USING (trace_id);
