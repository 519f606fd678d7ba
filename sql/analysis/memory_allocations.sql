-- memory_allocations: every block, its allocation paired with its free (the next event at
-- the same address on the same process and device, in time order; paired at ingest,
-- analysis/memory_context.py). One row per block:
-- - 'freed': allocated and freed within the trace;
-- - 'never_freed': allocated in the trace and still alive at its end (a leak, or long-lived
--   state such as optimizer state or a cache);
-- - 'alive_before_trace': freed in the trace at an address it never saw allocated, so
--   allocated before the trace started (parameters, state from earlier steps);
-- - 'free_missing': allocated again at its address before any free was recorded.
-- With where each end happened: operator, calling context (Python stack > operators, or
-- the native backtrace), NVTX ranges, and the allocation site's category. Events without
-- an address (2021 traces) cannot be paired and are left out.
--
-- depends: memory_device_events, memory_context, memory_call_contexts
--
-- @column trace_id          Trace.
-- @column source            'pytorch_allocator' or 'cuda_memory_usage_events'.
-- @column pid               Process.
-- @column device_type       'cuda' or 'cpu'.
-- @column device_id         Device (-1 for the CPU).
-- @column address           Block address.
-- @column bytes             Block size (bytes).
-- @column status            'freed', 'never_freed', 'alive_before_trace' or 'free_missing'.
-- @column alloc_event_id    Allocation event (NULL for 'alive_before_trace').
-- @column free_event_id     Free event (NULL when not freed in the trace).
-- @column alloc_ns          When it was allocated (ns; NULL for 'alive_before_trace').
-- @column free_ns           When it was freed (ns; NULL when not freed in the trace).
-- @column lifetime_ns       free_ns - alloc_ns (ns; NULL unless 'freed').
-- @column alloc_operator    Innermost operator around the allocation.
-- @column alloc_call_stack  Calling context of the allocation, outermost first.
-- @column alloc_nvtx_path   NVTX ranges / annotations around the allocation.
-- @column category          Allocation site: 'optimizer', 'backward', 'forward', 'other';
--                           'before trace' for 'alive_before_trace'.
-- @column free_operator     Innermost operator around the free.
-- @column free_call_stack   Calling context of the free.
-- @column free_nvtx_path    NVTX ranges / annotations around the free.
--
-- memory_blocks: memory_allocations with context ids in place of the context's text (what
-- the other memory views join on; memory_call_contexts holds the text).
--
-- @column alloc_context_id  memory_call_contexts.context_id of the allocation.
-- @column free_context_id   memory_call_contexts.context_id of the free.
CREATE OR REPLACE VIEW memory_blocks AS
WITH e AS (
    SELECT m.trace_id, m.source, m.pid, m.device_type, m.device_id, m.address, m.bytes, m.event_id,
           m.ts_ns, c.paired_event_id, c.block_status, c.context_id
    FROM memory_device_events m
    JOIN memory_context c USING (trace_id, event_id)
    WHERE c.block_status IS NOT NULL
)
SELECT a.trace_id, a.source, a.pid, a.device_type, a.device_id, a.address, a.bytes,
       a.block_status AS status,
       a.event_id AS alloc_event_id, f.event_id AS free_event_id,
       a.ts_ns AS alloc_ns, f.ts_ns AS free_ns, f.ts_ns - a.ts_ns AS lifetime_ns,
       a.context_id AS alloc_context_id, f.context_id AS free_context_id, x.category
FROM e a
LEFT JOIN e f ON f.trace_id = a.trace_id AND f.event_id = a.paired_event_id
LEFT JOIN memory_call_contexts x ON x.trace_id = a.trace_id AND x.context_id = a.context_id
WHERE a.bytes > 0
UNION ALL
SELECT trace_id, source, pid, device_type, device_id, address, -bytes, block_status,
       NULL, event_id, NULL, ts_ns, NULL, NULL, context_id, 'before trace'
FROM e
WHERE bytes < 0 AND block_status = 'alive_before_trace';

-- memory_allocations: (columns above)
CREATE OR REPLACE VIEW memory_allocations AS
SELECT b.* EXCLUDE (alloc_context_id, free_context_id, category),
       a.operator AS alloc_operator, a.call_stack AS alloc_call_stack, a.nvtx_path AS alloc_nvtx_path,
       b.category,
       f.operator AS free_operator, f.call_stack AS free_call_stack, f.nvtx_path AS free_nvtx_path
FROM memory_blocks b
LEFT JOIN memory_call_contexts a ON a.trace_id = b.trace_id AND a.context_id = b.alloc_context_id
LEFT JOIN memory_call_contexts f ON f.trace_id = b.trace_id AND f.context_id = b.free_context_id;
