-- memory_peak_live: the blocks alive at each step's allocated peak (memory_peaks): allocated
-- at or before the peak event and not freed by then, including blocks allocated before the
-- trace that were freed later. One row per step, device and block.
-- memory_peak_breakdown: what held the memory at each step's peak, grouped three ways
-- (`grouping`): by allocating operator, by calling context (the allocation's call stack)
-- and by category (allocation site: forward = activations, backward = gradients,
-- optimizer = optimizer state, other = inputs and parameters made in the trace). Memory
-- allocated before the trace and not freed in it cannot be itemized: its bytes (the peak
-- less every block seen) form one row, '(allocated before the trace)'.
--
-- depends: memory_peaks, memory_allocations
--
-- @column trace_id              Trace.
-- @column pid                   Process.
-- @column device_type           'cuda' or 'cpu'.
-- @column device_id             Device.
-- @column step                  Step range name.
-- @column step_index            Order of the step in its process.
-- @column peak_allocated_bytes  The step's peak (bytes).
-- @column (memory_peak_live)    Then every column of memory_allocations for the block.
CREATE OR REPLACE VIEW memory_peak_live AS
SELECT p.step, p.step_index, p.peak_allocated_bytes, p.peak_event_id, a.*
FROM memory_peaks p
JOIN memory_allocations a ON a.trace_id = p.trace_id AND a.pid = p.pid AND a.device_type = p.device_type
                         AND a.device_id = p.device_id
WHERE coalesce(a.alloc_event_id, -1) <= p.peak_event_id
  AND (a.free_event_id IS NULL OR a.free_event_id > p.peak_event_id);

-- memory_peak_breakdown: (one row per step, device, grouping and key)
--
-- @column grouping     'operator', 'call_stack' or 'category'.
-- @column key          The operator, call stack or category ('(allocated before the trace)'
--                      for memory from before the trace; '(none)' when the event had none).
-- @column live_bytes   Bytes of the key's blocks alive at the peak (bytes).
-- @column blocks       Blocks alive at the peak (NULL for memory from before the trace that
--                      was not freed in it).
-- @column peak_pct     live_bytes / peak_allocated_bytes x 100.
CREATE OR REPLACE VIEW memory_peak_breakdown AS
WITH keyed AS (
    SELECT trace_id, pid, device_type, device_id, step, step_index, peak_allocated_bytes, bytes,
           alloc_event_id IS NULL AS before_trace,
           coalesce(alloc_operator, '(none)') AS operator,
           coalesce(alloc_call_stack, '(none)') AS call_stack,
           category
    FROM memory_peak_live
),
grouped AS (
    SELECT trace_id, pid, device_type, device_id, step, step_index, 'operator' AS grouping,
           CASE WHEN before_trace THEN '(allocated before the trace)' ELSE operator END AS key, bytes
    FROM keyed
    UNION ALL
    SELECT trace_id, pid, device_type, device_id, step, step_index, 'call_stack',
           CASE WHEN before_trace THEN '(allocated before the trace)' ELSE call_stack END, bytes
    FROM keyed
    UNION ALL
    SELECT trace_id, pid, device_type, device_id, step, step_index, 'category',
           CASE WHEN before_trace THEN '(allocated before the trace)' ELSE category END, bytes
    FROM keyed
),
seen AS (
    SELECT trace_id, pid, device_type, device_id, step_index, sum(bytes) AS bytes
    FROM memory_peak_live
    GROUP BY ALL
),
unseen AS (
    SELECT p.trace_id, p.pid, p.device_type, p.device_id, p.step, p.step_index, g.grouping,
           '(allocated before the trace)' AS key,
           p.peak_allocated_bytes - coalesce(s.bytes, 0) AS bytes
    FROM memory_peaks p
    LEFT JOIN seen s USING (trace_id, pid, device_type, device_id, step_index)
    CROSS JOIN (VALUES ('operator'), ('call_stack'), ('category')) g(grouping)
),
totals AS (
    SELECT trace_id, pid, device_type, device_id, step, step_index, grouping, key,
           sum(bytes) AS live_bytes, count(*) AS blocks
    FROM grouped
    GROUP BY ALL
    UNION ALL
    SELECT trace_id, pid, device_type, device_id, step, step_index, grouping, key, bytes, NULL
    FROM unseen
    WHERE bytes <> 0
)
SELECT t.trace_id, t.pid, t.device_type, t.device_id, t.step, t.step_index, p.peak_allocated_bytes,
       t.grouping, t.key, CAST(sum(t.live_bytes) AS BIGINT) AS live_bytes,
       CAST(sum(t.blocks) AS BIGINT) AS blocks,
       100.0 * sum(t.live_bytes) / nullif(p.peak_allocated_bytes, 0) AS peak_pct
FROM totals t
JOIN memory_peaks p USING (trace_id, pid, device_type, device_id, step_index)
GROUP BY t.trace_id, t.pid, t.device_type, t.device_id, t.step, t.step_index, p.peak_allocated_bytes,
         t.grouping, t.key;
