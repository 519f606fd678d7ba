-- findings_by_rule: the findings of each trace grouped by rule: how often the rule
-- fired, the time of the flagged operations, the largest one's evidence as an
-- example (and when it started), and the advice. One row per trace, rule and severity.
--
-- depends: findings, gpu_gaps_over
--
-- @column trace_id     Trace.
-- @column rule         Rule name (findings.rule).
-- @column severity     'warning' or 'info'.
-- @column occurrences  Number of findings rows.
-- @column total_ns     Sum of the flagged operations' durations (ns).
-- @column cost_ns      What the flagged operations cost the GPU (ns): total_ns, except for the
--                      rules that flag the host waiting for the GPU (cuda_api_sync,
--                      host_sync_in_step), whose wait costs only the GPU idle time inside it (gaps
--                      of over 10 us in the process's GPU work, gpu_gaps_over): a host that waits
--                      for a busy GPU costs it nothing. The page ranks findings by it.
-- @column example      Evidence of the longest flagged operation (of equal ones, the evidence
--                      last in text order, so the example does not depend on row order).
-- @column advice       What to do about it.
-- @column example_start_ns  Start of the example's operation (ns, trace clock; of findings with the
--                      example's duration and evidence, the earliest; NULL when they have no time).
CREATE OR REPLACE VIEW findings_by_rule AS
WITH flagged AS MATERIALIZED (
    SELECT * FROM findings  -- read once: over a lake not yet derived, it is every rule's query
),
waits AS (
    SELECT * FROM flagged WHERE rule IN ('cuda_api_sync', 'host_sync_in_step') AND duration_ns > 0
),
gaps AS (
    SELECT * FROM gpu_gaps_over(10000) WHERE trace_id IN (SELECT trace_id FROM waits)
),
wait_cost AS (
    -- the GPU idle inside each flagged wait of the same process
    SELECT w.trace_id, w.rule, w.severity,
           CAST(coalesce(sum(least(g.end_ns, w.start_ns + w.duration_ns) - greatest(g.start_ns, w.start_ns))
                             FILTER (WHERE g.start_ns IS NOT NULL), 0)  -- least/greatest skip NULLs
                AS BIGINT) AS cost_ns
    FROM waits w
    LEFT JOIN gaps g ON g.trace_id = w.trace_id AND g.pid = w.pid
                    AND g.start_ns < w.start_ns + w.duration_ns AND g.end_ns > w.start_ns
    GROUP BY ALL
),
by_rule AS (
    SELECT trace_id, rule, severity, count(*) AS occurrences, CAST(sum(duration_ns) AS BIGINT) AS total_ns,
           arg_max(evidence, (duration_ns, evidence)) AS example, min(advice) AS advice,
           -- of equal examples the earliest (a NULL start only when all of them have none)
           arg_max_null(start_ns, (duration_ns, evidence, coalesce(-start_ns, -9223372036854775807))) AS example_start_ns
    FROM flagged
    GROUP BY trace_id, rule, severity
)
SELECT b.trace_id, b.rule, b.severity, b.occurrences, b.total_ns, b.example, b.advice, b.example_start_ns,
       CASE WHEN b.rule IN ('cuda_api_sync', 'host_sync_in_step') THEN coalesce(c.cost_ns, 0) ELSE b.total_ns END
           AS cost_ns
FROM by_rule b
LEFT JOIN wait_cost c USING (trace_id, rule, severity);
