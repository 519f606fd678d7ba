-- critical_path_first_steps: critical_path_summary for the trace's first process only
-- (the lowest pid; the trace page shows one process's steps). One row per step.
--
-- depends: critical_path_summary, critical_path_ops
CREATE OR REPLACE VIEW critical_path_first_steps AS
SELECT * FROM critical_path_summary
QUALIFY pid IS NOT DISTINCT FROM min(pid) OVER (PARTITION BY trace_id);

-- critical_path_first_ops: what puts the most time on the critical paths of the trace's
-- first process over all its steps (critical_path_ops summed over the steps). One row per
-- trace and (event kind, name, class).
--
-- @column path_ns  Time it puts on the process's paths, over all steps (ns).
-- @column edges    Path edges attributed to it, over all steps.
-- @column pct      path_ns / the summed path length of the process's steps x 100.
CREATE OR REPLACE VIEW critical_path_first_ops AS
WITH total AS (
    SELECT trace_id, any_value(pid) AS pid, sum(path_ns) AS path_ns FROM critical_path_first_steps GROUP BY trace_id
)
SELECT o.trace_id, o.event_kind, o.name, o.class, CAST(sum(o.path_ns) AS BIGINT) AS path_ns,
       CAST(sum(o.edges) AS BIGINT) AS edges, 100.0 * sum(o.path_ns) / any_value(t.path_ns) AS pct
FROM critical_path_ops o
JOIN total t ON t.trace_id = o.trace_id AND o.pid IS NOT DISTINCT FROM t.pid
GROUP BY o.trace_id, o.event_kind, o.name, o.class;
