-- trace_integrity: one row per trace and check: can the trace's numbers be taken as fact?
-- A check that did not pass names what it found (detail) and how much of the trace it
-- touches (affected, in the unit of affected_unit). The checks:
--   'device_work_analysed'   every category of device work was read (ingest counts the device
--                            events of categories it does not know: traces.metadata_json
--                            'unanalysed_device_events'); else GPU busy and idle leave it out;
--   'gpu_work_has_ids'       every GPU operation has a process and a device (a NULL one is
--                            left out of the per-process busy time);
--   'gpu_work_in_window'     no GPU operation starts before the first CPU-side API call (work
--                            launched before the profiler started, which no call explains);
--   'steps_cover_gpu_work'   the steps hold at least half of the GPU busy time of their
--                            processes (only where steps were found);
--   'step_rule_agrees'       steps found by periodicity in a trace whose own annotations
--                            carry step markers (the periods cut an annotated iteration);
--   'clocks_line_up'         at most 1 % of the launched kernels start before the API call
--                            that launched them (CPU and GPU clocks from different domains).
-- Each check has one row per trace (passed NULL where it cannot be evaluated: no GPU work,
-- no API calls, no steps).
--
-- depends: traces, gpu_ops, api_calls, steps, temporal_breakdown, nvtx_ranges, step_rule_pattern,
--          kernel_launches
-- materialize: per trace
--
-- @column trace_id       Trace.
-- @column check_name     Check (above).
-- @column passed         True when the check passed; NULL when it does not apply.
-- @column detail         What the check found, in words (NULL when it passed).
-- @column affected       How much of the trace the finding touches (NULL when it passed; DOUBLE).
-- @column affected_unit  Unit of affected: 'events', 'operations', 'pct' or 'kernels'.
CREATE OR REPLACE VIEW trace_integrity AS
WITH unanalysed AS (
    SELECT t.trace_id, e.key AS category, CAST(e.value AS BIGINT) AS events
    FROM traces t, json_each(t.metadata_json, '$.unanalysed_device_events') e
),
device_work AS (
    SELECT t.trace_id, 'device_work_analysed' AS check_name, u.trace_id IS NULL AS passed,
           CASE WHEN u.trace_id IS NOT NULL THEN 'device events of categories not analysed: '
                || u.named END AS detail,
           u.events AS affected, 'events' AS affected_unit
    FROM traces t
    LEFT JOIN (SELECT trace_id, sum(events) AS events,
                      string_agg(format('{} ({:,})', category, events), ', ' ORDER BY events DESC, category) AS named
               FROM unanalysed GROUP BY ALL) u USING (trace_id)
),
ops AS (
    SELECT trace_id, count(*) AS n, count(*) FILTER (WHERE pid IS NULL OR device_id IS NULL) AS no_ids,
           min(start_ns) FILTER (WHERE start_ns > 0) AS first_ns
    FROM gpu_ops GROUP BY ALL
),
ids AS (
    SELECT t.trace_id, 'gpu_work_has_ids', CASE WHEN o.n > 0 THEN o.no_ids = 0 END,
           CASE WHEN o.no_ids > 0 THEN format('{:,} of {:,} GPU operations have no process or device', o.no_ids, o.n) END,
           nullif(o.no_ids, 0), 'operations'
    FROM traces t LEFT JOIN ops o USING (trace_id)
),
before AS (
    SELECT o.trace_id, count(*) AS n
    FROM gpu_ops o
    JOIN (SELECT trace_id, min(start_ns) AS first_call_ns FROM api_calls GROUP BY ALL) a USING (trace_id)
    WHERE o.start_ns > 0 AND o.start_ns < a.first_call_ns
    GROUP BY ALL
),
window_ AS (
    SELECT t.trace_id, 'gpu_work_in_window',
           CASE WHEN o.n > 0 AND EXISTS (SELECT 1 FROM api_calls a WHERE a.trace_id = t.trace_id)
                THEN b.n IS NULL END,
           CASE WHEN b.n IS NOT NULL THEN format('{:,} GPU operations start before the first API call', b.n) END,
           b.n, 'operations'
    FROM traces t LEFT JOIN ops o USING (trace_id) LEFT JOIN before b USING (trace_id)
),
coverage AS (
    SELECT s.trace_id, 100.0 * sum(s.busy) / nullif(sum(b.busy_ns), 0) AS pct
    FROM (SELECT trace_id, pid, sum(gpu_busy_ns) AS busy FROM steps GROUP BY ALL) s
    JOIN temporal_breakdown b USING (trace_id, pid)
    GROUP BY ALL
),
covered AS (
    SELECT t.trace_id, 'steps_cover_gpu_work', c.pct >= 50,
           CASE WHEN c.pct < 50 THEN format('the steps hold {:.1f} % of the GPU busy time', c.pct) END,
           CASE WHEN c.pct < 50 THEN round(100 - c.pct, 1) END, 'pct'
    FROM traces t LEFT JOIN coverage c USING (trace_id)
),
markers AS (
    SELECT trace_id, count(*) AS n, min(range) AS example
    FROM nvtx_ranges
    WHERE regexp_matches(regexp_replace(range, '^[^:]*:', ''), step_rule_pattern('profiler_step'), 'i')
       OR regexp_matches(regexp_replace(range, '^[^:]*:', ''), step_rule_pattern('vllm'), 'i')
       OR regexp_matches(regexp_replace(range, '^[^:]*:', ''), step_rule_pattern('sglang'), 'i')
    GROUP BY ALL
),
rules AS (
    SELECT trace_id, bool_or(step_rule = 'periodicity') AS periodic, count(*) AS steps FROM steps GROUP BY ALL
),
agrees AS (
    SELECT t.trace_id, 'step_rule_agrees', CASE WHEN r.steps > 0 THEN NOT (r.periodic AND m.n IS NOT NULL) END,
           CASE WHEN r.periodic AND m.n IS NOT NULL
                THEN format('{:,} steps found by periodicity inside {:,} annotated step range(s) such as ''{}''',
                            r.steps, m.n, m.example) END,
           CASE WHEN r.periodic AND m.n IS NOT NULL THEN r.steps END, 'steps'
    FROM traces t LEFT JOIN rules r USING (trace_id) LEFT JOIN markers m USING (trace_id)
),
launches AS (
    SELECT trace_id, count(*) AS n, count(*) FILTER (WHERE launch_latency_ns < 0) AS early
    FROM kernel_launches GROUP BY ALL
),
clocks AS (
    SELECT t.trace_id, 'clocks_line_up', CASE WHEN l.n > 0 THEN l.early <= 0.01 * l.n END,
           CASE WHEN l.early > 0.01 * l.n
                THEN format('{:,} of {:,} kernels start before the call that launched them', l.early, l.n) END,
           CASE WHEN l.early > 0.01 * l.n THEN l.early END, 'kernels'
    FROM traces t LEFT JOIN launches l USING (trace_id)
)
SELECT * FROM device_work
UNION ALL SELECT * FROM ids
UNION ALL SELECT * FROM window_
UNION ALL SELECT * FROM covered
UNION ALL SELECT * FROM agrees
UNION ALL SELECT * FROM clocks;
