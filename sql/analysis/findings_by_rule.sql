-- findings_by_rule: the findings of each trace grouped by rule: how often the rule
-- fired, the time of the flagged operations, the largest one's evidence as an
-- example (and when it started), and the advice. One row per trace, rule and severity.
--
-- depends: findings
--
-- @column trace_id     Trace.
-- @column rule         Rule name (findings.rule).
-- @column severity     'warning' or 'info'.
-- @column occurrences  Number of findings rows.
-- @column total_ns     Sum of the flagged operations' durations (ns).
-- @column example      Evidence of the longest flagged operation (of equal ones, the evidence
--                      last in text order, so the example does not depend on row order).
-- @column advice       What to do about it.
-- @column example_start_ns  Start of the example's operation (ns, trace clock; NULL when that
--                      finding has no time).
CREATE OR REPLACE VIEW findings_by_rule AS
SELECT trace_id, rule, severity, count(*) AS occurrences, CAST(sum(duration_ns) AS BIGINT) AS total_ns,
       arg_max(evidence, (duration_ns, evidence)) AS example, min(advice) AS advice,
       arg_max(start_ns, (duration_ns, evidence)) AS example_start_ns
FROM findings
GROUP BY trace_id, rule, severity;
