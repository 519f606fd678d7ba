-- gpu_periods: per process, the periodicity of its GPU work: the anchor kernel (the one
-- that runs once per period), the period, and the steady-state run of periods. Only
-- 'replay' and 'eager' kernels (gpu_op_phases) count, unless the process has no others
-- (a trace of graph capture alone). A kernel name is a candidate when it ran at least 4
-- times and at least 60 % of its intervals lie within 0.8-1.25 x their median; of the
-- candidates covering at least 90 % of the longest coverage ((runs - 1) x median), the one
-- with the longest median interval is the anchor (of equal ones, the last by name).
-- gpu_periods_of(kernel_phases): the same over a table or CTE of kernels (trace_id, pid,
-- name, start_ns, phase), for views that need the periods of a few traces only.
--
-- depends: gpu_op_phases
-- materialize: per trace
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column anchor          Anchor kernel name.
-- @column period_ns       Median interval between its executions (ns).
-- @column runs            Its executions.
-- @column period_index    Index of the period within the steady run (0 = first).
-- @column start_ns        Start of the period: an execution of the anchor (ns).
-- @column end_ns          Its next execution (ns).
CREATE OR REPLACE MACRO gpu_periods_of(kernel_phases) AS TABLE
WITH ops AS (
    SELECT trace_id, pid, name, start_ns, phase FROM query_table(kernel_phases)
),
scope AS (
    SELECT trace_id, pid, bool_or(phase IN ('replay', 'eager')) AS has_steady FROM ops GROUP BY ALL
),
k AS (
    SELECT o.trace_id, o.pid, o.name, o.start_ns,
           o.start_ns - lag(o.start_ns) OVER (PARTITION BY o.trace_id, o.pid, o.name ORDER BY o.start_ns) AS delta_ns
    FROM ops o JOIN scope s USING (trace_id, pid)
    WHERE NOT s.has_steady OR o.phase IN ('replay', 'eager')
),
med AS (
    SELECT trace_id, pid, name, count(*) AS runs, median(delta_ns) AS period_ns
    FROM k GROUP BY ALL HAVING count(*) >= 4
),
candidates AS (
    SELECT m.trace_id, m.pid, m.name, m.runs, m.period_ns, (m.runs - 1) * m.period_ns AS coverage_ns
    FROM med m JOIN k USING (trace_id, pid, name)
    WHERE m.period_ns > 0
    GROUP BY ALL
    HAVING avg(CASE WHEN k.delta_ns BETWEEN 0.8 * m.period_ns AND 1.25 * m.period_ns THEN 1 ELSE 0 END)
           FILTER (WHERE k.delta_ns IS NOT NULL) >= 0.6
),
anchor AS (
    SELECT trace_id, pid, arg_max(name, {'period_ns': period_ns, 'name': name}) AS anchor, max(period_ns) AS period_ns
    FROM (SELECT *, max(coverage_ns) OVER (PARTITION BY trace_id, pid) AS best_ns FROM candidates)
    WHERE coverage_ns >= 0.9 * best_ns
    GROUP BY ALL
),
marked AS (
    SELECT k.trace_id, k.pid, a.anchor, a.period_ns, k.start_ns - k.delta_ns AS start_ns, k.start_ns AS end_ns,
           k.delta_ns BETWEEN 0.8 * a.period_ns AND 1.25 * a.period_ns AS regular
    FROM k JOIN anchor a ON a.trace_id = k.trace_id AND a.pid = k.pid AND a.anchor = k.name
    WHERE k.delta_ns IS NOT NULL
),
islands AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, pid ORDER BY start_ns)
              - row_number() OVER (PARTITION BY trace_id, pid, regular ORDER BY start_ns) AS island
    FROM marked
),
runs AS (
    SELECT trace_id, pid, island, count(*) AS n, min(start_ns) AS first_ns
    FROM islands WHERE regular GROUP BY ALL
),
best AS (
    SELECT trace_id, pid, arg_max(island, (n, -first_ns)) AS island FROM runs GROUP BY ALL
)
SELECT i.trace_id, i.pid, i.anchor, i.period_ns, count(*) OVER (PARTITION BY i.trace_id, i.pid) + 1 AS runs,
       row_number() OVER (PARTITION BY i.trace_id, i.pid ORDER BY i.start_ns) - 1 AS period_index,
       i.start_ns, i.end_ns
FROM islands i
JOIN best b ON b.trace_id = i.trace_id AND b.pid = i.pid AND b.island = i.island
WHERE i.regular;

CREATE OR REPLACE VIEW gpu_periods AS
WITH kernel_phases AS (
    SELECT trace_id, pid, name, start_ns, phase FROM gpu_op_phases WHERE category = 'kernel'
)
SELECT * FROM gpu_periods_of(kernel_phases);
