-- memory_peak_live: the blocks alive at each step's allocated peak (memory_peaks): allocated
-- at or before the peak event and not freed by then, including blocks allocated before the
-- trace that were freed later (memory_peak_breakdown sums the same set by context id, which
-- is cheaper than through this view's text). One row per step, device and block.
-- memory_peak_breakdown: what held the memory at each step's peak, grouped three ways
-- (`grouping`): by allocating operator, by calling context (the allocation's call stack)
-- and by category (allocation site: forward = activations, backward = gradients,
-- optimizer = optimizer state, other = inputs and parameters made in the trace). Memory
-- allocated before the trace and not freed in it cannot be itemized: its bytes (the peak
-- less every block seen) form one row, '(allocated before the trace)'.
--
-- depends: memory_peaks, memory_device_blocks, memory_allocations, memory_call_contexts
-- materialize: per trace
--
-- @column trace_id              Trace.
-- @column pid                   Process.
-- @column device_type           'cuda' or 'cpu'.
-- @column device_id             Device.
-- @column step                  Step range name.
-- @column step_index            Order of the step in its process.
-- @column peak_allocated_bytes  The step's peak (bytes).
-- @column peak_event_id         memory_peaks.peak_event_id: the blocks are those alive after it.
-- Then the block, as in memory_allocations:
-- @column source                'pytorch_allocator' or 'cuda_memory_usage_events'.
-- @column address               Block address.
-- @column bytes                 Block size (bytes).
-- @column status                'freed', 'never_freed', 'alive_before_trace' or 'free_missing'.
-- @column alloc_event_id        Allocation event (NULL: allocated before the trace).
-- @column free_event_id         Free event (NULL: not freed in the trace).
-- @column alloc_ns              When it was allocated (ns).
-- @column free_ns               When it was freed (ns).
-- @column lifetime_ns           free_ns - alloc_ns (ns).
-- @column alloc_operator        Innermost operator around the allocation.
-- @column alloc_call_stack      Calling context of the allocation.
-- @column alloc_nvtx_path       NVTX ranges / annotations around the allocation.
-- @column category              Allocation site ('before trace' for blocks from before it).
-- @column free_operator         Innermost operator around the free.
-- @column free_call_stack       Calling context of the free.
-- @column free_nvtx_path        NVTX ranges / annotations around the free.
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
-- @column blocks       Blocks alive at the peak (memory from before the trace that was not
--                      freed in it counts none: its blocks were never seen).
-- @column peak_pct     live_bytes / peak_allocated_bytes x 100.
CREATE OR REPLACE VIEW memory_peak_breakdown AS
WITH peaks AS MATERIALIZED (
    SELECT * FROM memory_peaks
),
live AS MATERIALIZED (
    -- blocks alive at each peak, by allocation context (ids: the text is joined to few rows)
    SELECT b.trace_id, b.pid, b.device_type, b.device_id, p.step_index, b.alloc_context_id,
           b.alloc_event_id IS NULL AS before_trace, sum(b.bytes) AS bytes, count(*) AS blocks
    FROM peaks p
    JOIN memory_device_blocks b ON b.trace_id = p.trace_id AND b.pid = p.pid AND b.device_type = p.device_type
                        AND b.device_id = p.device_id
    WHERE coalesce(b.alloc_event_id, -1) <= p.peak_event_id
      AND (b.free_event_id IS NULL OR b.free_event_id > p.peak_event_id)
    GROUP BY ALL
),
grouped AS (
    SELECT l.trace_id, l.pid, l.device_type, l.device_id, l.step_index, g.grouping,
           CASE WHEN l.before_trace THEN '(allocated before the trace)'
                WHEN g.grouping = 'operator' THEN coalesce(c.operator, '(none)')
                WHEN g.grouping = 'call_stack' THEN coalesce(c.call_stack, '(none)')
                ELSE c.category END AS key,
           sum(l.bytes) AS live_bytes, sum(l.blocks) AS blocks
    FROM live l
    LEFT JOIN memory_call_contexts c ON c.trace_id = l.trace_id AND c.context_id = l.alloc_context_id
    CROSS JOIN (VALUES ('operator'), ('call_stack'), ('category')) g(grouping)
    GROUP BY ALL
),
seen AS (
    SELECT trace_id, pid, device_type, device_id, step_index, sum(bytes) AS bytes
    FROM live
    GROUP BY ALL
),
rows AS (
    SELECT p.trace_id, p.pid, p.device_type, p.device_id, p.step, p.step_index, p.peak_allocated_bytes,
           g.grouping, g.key, g.live_bytes, g.blocks
    FROM peaks p
    JOIN grouped g USING (trace_id, pid, device_type, device_id, step_index)
    UNION ALL
    -- what the peak holds beyond every block seen: allocated before the trace, never freed in it
    SELECT p.trace_id, p.pid, p.device_type, p.device_id, p.step, p.step_index, p.peak_allocated_bytes,
           g.grouping, '(allocated before the trace)', p.peak_allocated_bytes - coalesce(s.bytes, 0), 0
    FROM peaks p
    LEFT JOIN seen s USING (trace_id, pid, device_type, device_id, step_index)
    CROSS JOIN (VALUES ('operator'), ('call_stack'), ('category')) g(grouping)
    WHERE p.peak_allocated_bytes <> coalesce(s.bytes, 0)
)
SELECT trace_id, pid, device_type, device_id, step, step_index, peak_allocated_bytes, grouping, key,
       CAST(sum(live_bytes) AS BIGINT) AS live_bytes, CAST(sum(blocks) AS BIGINT) AS blocks,
       100.0 * sum(live_bytes) / nullif(peak_allocated_bytes, 0) AS peak_pct
FROM rows
GROUP BY trace_id, pid, device_type, device_id, step, step_index, peak_allocated_bytes, grouping, key;
