-- finding_fusion: chains of memory-bound kernels whose fusion would save a large share of the
-- step: fusion_summary's predicted saving is at least 10 % of the step, on average over the
-- trace's steps (or of the trace's duration when it has no steps). One row per trace and
-- process; start and duration are the first chain's start and the saving per step.
--
-- depends: fusion_summary, fusion_candidates, fusion_chains, traces
--
-- @column trace_id     Trace.
-- @column rule         'fusion'.
-- @column severity     'warning' at 25 % of the step or more, else 'info'.
-- @column pid          Process.
-- @column start_ns     Start of the first candidate chain (ns).
-- @column duration_ns  Predicted saving per step (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_fusion AS
WITH per_trace AS (
    SELECT s.trace_id, s.pid, count(*) AS steps, avg(s.saved_ns) AS saved_ns, avg(s.chains) AS chains,
           avg(s.launches_saved) AS launches_saved,
           avg(coalesce(s.step_ns, t.duration_ns)) AS step_ns
    FROM fusion_summary s
    JOIN traces t USING (trace_id)
    GROUP BY ALL
),
top AS (
    SELECT trace_id, arg_min(operators, rank) AS operators, arg_min(python_location, rank) AS location,
           arg_min(per_step, rank) AS per_step, arg_min(saved_ns_per_step, rank) AS top_saved_ns
    FROM fusion_candidates
    GROUP BY ALL
),
first_chain AS (
    SELECT trace_id, pid, min(start_ns) AS start_ns FROM fusion_chains GROUP BY ALL
)
SELECT p.trace_id, 'fusion' AS rule,
       CASE WHEN 100.0 * p.saved_ns / p.step_ns >= 25 THEN 'warning' ELSE 'info' END AS severity,
       p.pid, f.start_ns, CAST(p.saved_ns AS BIGINT) AS duration_ns,
       printf('fusing %.0f chains of memory-bound kernels per step would save %.3f ms of GPU time per step '
              || '(%.1f %% of the step) and %.0f kernel launches; the largest: %s%s, %s per step, %.3f ms',
              p.chains, p.saved_ns / 1e6, 100.0 * p.saved_ns / p.step_ns, p.launches_saved, c.operators,
              CASE WHEN c.location IS NOT NULL THEN ' at ' || c.location ELSE '' END,
              coalesce(printf('%.0f times', c.per_step), 'once'), c.top_saved_ns / 1e6) AS evidence,
       'Compile the model with torch.compile (default mode fuses these chains into one kernel each), or '
       || 'fuse the largest chains by hand (fusion_candidates lists them with their Python location).' AS advice
FROM per_trace p
JOIN top c USING (trace_id)
JOIN first_chain f USING (trace_id, pid)
WHERE p.saved_ns >= 0.10 * p.step_ns;
