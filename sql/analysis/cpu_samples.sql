-- cpu_sample_flat: where the CPU time of sampled threads goes, per function (Nsight
-- CPU sampling: COMPOSITE_EVENTS with their SAMPLING_CALLCHAINS). Each sample is
-- one observation of a thread's stack; a function's self samples are those where it
-- was the running frame (the leaf), its total samples those where it was anywhere
-- on the stack (counted once per sample). Unresolved addresses count under
-- '(unresolved)'. One row per trace, process and function.
--
-- depends: cpu_samples, callchains
-- materialize: per trace
--
-- @column trace_id       Trace.
-- @column pid            Process.
-- @column symbol         Function symbol (or '(unresolved)').
-- @column module         Binary or library (the most common among its frames; ties to the first name).
-- @column self_samples   Samples with this function as the leaf.
-- @column total_samples  Samples with this function anywhere on the stack.
-- @column self_pct       self_samples / the process's samples x 100.
-- @column total_pct      total_samples / the process's samples x 100.
CREATE OR REPLACE VIEW cpu_sample_flat AS
WITH frames AS (
    SELECT s.trace_id, s.pid, s.sample_id, c.depth,
           CASE WHEN c.is_unresolved THEN '(unresolved)' ELSE coalesce(c.symbol, '(unresolved)') END AS symbol,
           c.module
    FROM cpu_samples s
    JOIN callchains c ON c.trace_id = s.trace_id AND c.kind = 'sampling' AND c.callchain_id = s.sample_id
),
per_process AS (
    SELECT trace_id, pid, count(*) AS samples FROM cpu_samples GROUP BY ALL
)
SELECT f.trace_id, f.pid, f.symbol, mode(f.module ORDER BY f.module) AS module,
       count(DISTINCT f.sample_id) FILTER (WHERE f.depth = 0) AS self_samples,
       count(DISTINCT f.sample_id) AS total_samples,
       100.0 * count(DISTINCT f.sample_id) FILTER (WHERE f.depth = 0) / any_value(p.samples) AS self_pct,
       100.0 * count(DISTINCT f.sample_id) / any_value(p.samples) AS total_pct
FROM frames f
JOIN per_process p USING (trace_id, pid)
GROUP BY f.trace_id, f.pid, f.symbol;
